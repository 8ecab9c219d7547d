package dev.ledgerline.transfers.conformance;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.ledgerline.transfers.conformance.ProviderConformance.Obligation;
import dev.ledgerline.transfers.conformance.ProviderConformance.Options;
import dev.ledgerline.transfers.conformance.ProviderConformance.Report;
import dev.ledgerline.transfers.conformance.StandInProvider.Flaw;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The conformance kit has teeth: a stand-in provider that keeps every obligation passes all of them, and
 * each deliberate flaw fails exactly the obligations it breaks — no more, no fewer. (The sandbox's own runs
 * are in {@code SandboxConformanceTest}.)
 */
class ProviderConformanceTest {

    /**
     * Each flaw and the obligations it must be caught breaking. A provider without idempotency also executes a
     * rejected key when it is sent again, and keeps no key for any window; lookups that lag or lie hide a
     * rejection, and an execution whose answer was never read, as well as an answered execution.
     */
    static final Map<Flaw, Set<Obligation>> BROKEN = new EnumMap<>(Map.ofEntries(
            Map.entry(Flaw.NONE, EnumSet.noneOf(Obligation.class)),
            Map.entry(Flaw.EXECUTES_TWICE_PER_KEY, EnumSet.of(Obligation.AT_MOST_ONCE_PER_KEY, Obligation.REJECTIONS_ARE_FINAL,
                    Obligation.KEEPS_KEYS_FOR_THE_STATED_WINDOW)),
            Map.entry(Flaw.IGNORES_DEADLINE, EnumSet.of(Obligation.REFUSES_AFTER_DEADLINE)),
            Map.entry(Flaw.LOOKUP_LAGS, EnumSet.of(Obligation.LOOKUP_REFLECTS_COMPLETION, Obligation.REJECTIONS_ARE_FINAL,
                    Obligation.LOOKUP_COVERS_UNANSWERED_SENDS)),
            Map.entry(Flaw.LOOKUP_LIES, EnumSet.of(Obligation.LOOKUP_REFLECTS_COMPLETION, Obligation.REJECTIONS_ARE_FINAL,
                    Obligation.LOOKUP_COVERS_UNANSWERED_SENDS)),
            Map.entry(Flaw.FORGETS_REJECTIONS, EnumSet.of(Obligation.REJECTIONS_ARE_FINAL)),
            Map.entry(Flaw.CHECKS_DEADLINE_ON_ARRIVAL, EnumSet.of(Obligation.REFUSES_AFTER_DEADLINE)),
            Map.entry(Flaw.CONFLICT_WHILE_IN_FLIGHT, EnumSet.of(Obligation.IN_FLIGHT_REPEAT_ANSWERS_THE_RESULT)),
            Map.entry(Flaw.REPLAYS_SAVED_ERROR, EnumSet.of(Obligation.ERRORS_ARE_NOT_REPLAYED)),
            Map.entry(Flaw.REJECTS_REUSED_KEY, EnumSet.of(Obligation.REFUSAL_MEANS_NOT_EXECUTED)),
            Map.entry(Flaw.CLOCK_BEHIND, EnumSet.of(Obligation.CLOCK_WITHIN_BOUND)),
            Map.entry(Flaw.LOOKUP_MISSES_UNANSWERED, EnumSet.of(Obligation.LOOKUP_COVERS_UNANSWERED_SENDS)),
            Map.entry(Flaw.FORGETS_KEYS_EARLY, EnumSet.of(Obligation.KEEPS_KEYS_FOR_THE_STATED_WINDOW))));

    private static final long HOLD_MS = 900;

    /** Every switch of the stand-in, rejections by a known amount, and the key window it states. */
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
                return Duration.ofMillis(HOLD_MS);
            }
        }).withAnswerHolds(new ProviderConformance.Holds() {
            @Override
            public void before() {
                provider.delayNextAnswer(holdFor().toMillis());
            }

            @Override
            public void after() {
            }

            @Override
            public Duration holdFor() {
                return Duration.ofMillis(HOLD_MS);
            }
        }).withErrors(new ProviderConformance.Errors() {
            @Override
            public void before() {
                provider.failNext();
            }

            @Override
            public void after() {
            }
        }).withRejections(ProviderConformance.Rejections.byAmount(StandInProvider.REJECTED_AMOUNT))
                .withKeyWindow(StandInProvider.KEY_WINDOW);
    }

    /**
     * The whole table, stand-in by obligation, printed; the stand-ins run four at a time (they mostly wait, and
     * more at once would blur the timings the checks rest on). A conforming stand-in keeps every obligation; each
     * flaw fails exactly its own.
     */
    @Test
    void eachStandInFailsExactlyTheObligationsItBreaks() throws Exception {
        Map<String, Report> reports = new LinkedHashMap<>();
        ExecutorService runs = Executors.newFixedThreadPool(4);
        try {
            Map<Flaw, Future<Report>> pending = new EnumMap<>(Flaw.class);
            for (Flaw flaw : Flaw.values()) {
                pending.put(flaw, runs.submit(() -> {
                    try (StandInProvider provider = StandInProvider.start(flaw)) {
                        return ProviderConformance.check(provider.base(), options(provider));
                    }
                }));
            }
            for (Flaw flaw : Flaw.values()) {
                reports.put(flaw.name().toLowerCase().replace('_', '-'), pending.get(flaw).get(5, TimeUnit.MINUTES));
            }
        } finally {
            runs.shutdownNow();
        }
        System.out.println();
        System.out.print("conformance kit, stand-in by obligation:\n" + ProviderConformance.matrix(reports));

        List<String> wrong = new ArrayList<>();
        for (Flaw flaw : Flaw.values()) {
            Report report = reports.get(flaw.name().toLowerCase().replace('_', '-'));
            if (!report.failing().equals(BROKEN.get(flaw))) {
                wrong.add(flaw + " fails " + report.failing() + ", expected " + BROKEN.get(flaw) + "\n" + report.table());
            }
        }
        assertTrue(wrong.isEmpty(), String.join("\n", wrong));
        assertEquals(EnumSet.allOf(Obligation.class), reports.get("none").holding(), reports.get("none").table());
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

    /** Without the switches a real provider does not have, those obligations are not checked rather than passed. */
    @Test
    void withoutAWayToProvokeThemObligationsAreNotCheckedRatherThanPassed() throws Exception {
        try (StandInProvider provider = StandInProvider.start(Flaw.NONE)) {
            Report report = ProviderConformance.check(provider.base(), Options.defaults());
            System.out.print("stand-in none, no switches: " + report.table());
            for (Obligation o : List.of(Obligation.REJECTIONS_ARE_FINAL, Obligation.ERRORS_ARE_NOT_REPLAYED,
                    Obligation.KEEPS_KEYS_FOR_THE_STATED_WINDOW)) {
                assertEquals(ProviderConformance.State.NOT_CHECKED, report.state(o), report.table());
            }
            assertTrue(report.failing().isEmpty(), report.table());
        }
    }

    /** A clock that is off is a breach only beyond the bound the service is configured with. */
    @Test
    void aClockBehindWithinTheStatedBoundKeepsTheClockObligation() throws Exception {
        try (StandInProvider provider = StandInProvider.start(Flaw.CLOCK_BEHIND)) {
            Report report = ProviderConformance.check(provider.base(),
                    options(provider).withClockSkewBound(Duration.ofMillis(StandInProvider.CLOCK_BEHIND_MS + 500)));
            assertEquals(EnumSet.allOf(Obligation.class), report.holding(), report.table());
        }
    }

    @Test
    void theKitChecksExactlyTheObligationsTheContractLists() throws Exception {
        JsonNode contract = new ObjectMapper(new YAMLFactory()).readTree(ProviderConformance.contractLocation().toFile());
        List<String> listed = new ArrayList<>();
        contract.path("info").path("x-obligations").forEach(id -> listed.add(id.asText()));
        List<String> checked = Arrays.stream(Obligation.values()).filter(o -> o != Obligation.ANSWERS_MATCH_THE_CONTRACT)
                .map(o -> o.id).toList();
        assertEquals(listed, checked, "provider-api.yaml's x-obligations and the kit's checks, in the same order");
    }
}
