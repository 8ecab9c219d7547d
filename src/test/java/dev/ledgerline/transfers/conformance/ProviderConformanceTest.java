package dev.ledgerline.transfers.conformance;

import dev.ledgerline.transfers.conformance.ProviderConformance.Obligation;
import dev.ledgerline.transfers.conformance.ProviderConformance.Options;
import dev.ledgerline.transfers.conformance.ProviderConformance.Report;
import dev.ledgerline.transfers.conformance.StandInProvider.Flaw;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The conformance kit has teeth: a stand-in provider that keeps every obligation passes all of them, and
 * each deliberate flaw fails exactly the obligation it breaks — no more, no fewer. (The sandbox's own runs
 * are in {@code SandboxConformanceTest}.)
 */
class ProviderConformanceTest {

    /**
     * Each flaw and the obligations it must be caught breaking. A provider without idempotency also executes
     * a rejected key when it is sent again; lookups that lag or lie hide a rejection as well as an execution.
     */
    static final Map<Flaw, Set<Obligation>> BROKEN = Map.of(
            Flaw.EXECUTES_TWICE_PER_KEY, EnumSet.of(Obligation.AT_MOST_ONCE_PER_KEY, Obligation.REJECTIONS_ARE_FINAL),
            Flaw.IGNORES_DEADLINE, EnumSet.of(Obligation.REFUSES_AFTER_DEADLINE),
            Flaw.LOOKUP_LAGS, EnumSet.of(Obligation.LOOKUP_REFLECTS_COMPLETION, Obligation.REJECTIONS_ARE_FINAL),
            Flaw.LOOKUP_LIES, EnumSet.of(Obligation.LOOKUP_REFLECTS_COMPLETION, Obligation.REJECTIONS_ARE_FINAL),
            Flaw.FORGETS_REJECTIONS, EnumSet.of(Obligation.REJECTIONS_ARE_FINAL),
            Flaw.CHECKS_DEADLINE_ON_ARRIVAL, EnumSet.of(Obligation.REFUSES_AFTER_DEADLINE));

    /** Rejections by a known amount, and holds through the stand-in's own switch. */
    static Options options(StandInProvider provider) {
        return Options.defaults().withHolds(new ProviderConformance.Holds() {
            @Override
            public void before() {
                provider.holdNext(holdFor().toMillis());
            }

            @Override
            public void after() {
            }

            @Override
            public Duration holdFor() {
                return Duration.ofMillis(900);
            }
        }).withRejections(ProviderConformance.Rejections.byAmount(StandInProvider.REJECTED_AMOUNT));
    }

    @Test
    void aConformingProviderKeepsEveryObligation() throws Exception {
        try (StandInProvider provider = StandInProvider.start(Flaw.NONE)) {
            Report report = ProviderConformance.check(provider.base(), options(provider));
            System.out.print(report.table());
            assertEquals(EnumSet.allOf(Obligation.class), report.holding(), report.table());
        }
    }

    @ParameterizedTest
    @EnumSource(value = Flaw.class, mode = EnumSource.Mode.EXCLUDE, names = "NONE")
    void eachFlawFailsExactlyTheObligationsItBreaks(Flaw flaw) throws Exception {
        try (StandInProvider provider = StandInProvider.start(flaw)) {
            Report report = ProviderConformance.check(provider.base(), options(provider));
            System.out.print(flaw + ": " + report.table());
            assertEquals(BROKEN.get(flaw), report.failing(), report.table());
        }
    }

    /** A lag is no breach when the provider states it and the service waits it out. */
    @Test
    void aStatedLookupLagIsWaitedOut() throws Exception {
        try (StandInProvider provider = StandInProvider.start(Flaw.LOOKUP_LAGS)) {
            Report report = ProviderConformance.check(provider.base(),
                    options(provider).withLookupLag(Duration.ofMillis(StandInProvider.LAG_MS + 500)));
            assertEquals(EnumSet.allOf(Obligation.class), report.holding(), report.table());
        }
    }

    @Test
    void withoutAWayToProvokeARejectionThatObligationIsNotCheckedRatherThanPassed() throws Exception {
        try (StandInProvider provider = StandInProvider.start(Flaw.NONE)) {
            Report report = ProviderConformance.check(provider.base(), Options.defaults());
            assertEquals(ProviderConformance.State.NOT_CHECKED, report.verdicts().stream()
                    .filter(v -> v.obligation() == Obligation.REJECTIONS_ARE_FINAL).findFirst().orElseThrow().state());
        }
    }
}
