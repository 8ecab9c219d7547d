package dev.ledgerline.transfers.conformance;

import dev.ledgerline.transfers.conformance.ProviderConformance.Obligation;
import dev.ledgerline.transfers.conformance.ProviderConformance.Options;
import dev.ledgerline.transfers.conformance.ProviderConformance.Report;
import dev.ledgerline.transfers.support.Sandbox;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.URL;
import java.time.Duration;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The sandbox the service is developed and tested against keeps the provider contract: in its default,
 * idempotent mode every obligation holds, including a send held in transit past its deadline (refused when
 * applied). In {@code idempotent:false} mode — the fault suite's provider without idempotency, against which
 * the service must rely on the deadline alone — the kit names exactly the obligations that mode gives up (it
 * keeps no key at all). A lookup lag is a breach unless stated, and waited out when it is. A sandbox clock
 * 3 s behind fails the clock obligation alone: its deadline check follows its own clock, as its Date does.
 * The table of every mode is printed at the end.
 */
@QuarkusTest
class SandboxConformanceTest {

    private static final long HOLD_MS = 900;
    /** The sandbox keeps keys for ever; it states a window the kit can wait out. */
    private static final Duration KEY_WINDOW = Duration.ofSeconds(2);
    private static final Map<String, Report> TABLE = Collections.synchronizedMap(new LinkedHashMap<>());

    @TestHTTPResource("/sandbox/provider")
    URL sandbox;

    @AfterEach
    void healthy() {
        Sandbox.reset();
    }

    /**
     * The sandbox in the mode {@code base}, rejecting while its reject rate is 1 and holding a first send
     * while its hold rate is 1; the mode is kept throughout.
     */
    private static Options throughFaults(Map<String, Object> base) {
        Sandbox.faults(base);
        return Options.defaults().withRejections(new ProviderConformance.Rejections() {
            @Override
            public void before() {
                Sandbox.faults(with(base, "rejectRate", 1.0));
            }

            @Override
            public void after() {
                Sandbox.faults(base);
            }
        }).withHolds(new ProviderConformance.Holds() {
            @Override
            public void before() {
                Sandbox.faults(with(with(base, "holdMs", HOLD_MS), "holdRate", 1.0));
            }

            @Override
            public void after() {
                Sandbox.faults(base);
            }

            @Override
            public Duration holdFor() {
                return Duration.ofMillis(HOLD_MS);
            }
        }).withAnswerHolds(new ProviderConformance.Holds() {
            @Override
            public void before() {
                Sandbox.faults(with(base, "latencyMs", HOLD_MS));
            }

            @Override
            public void after() {
                Sandbox.faults(base);
            }

            @Override
            public Duration holdFor() {
                return Duration.ofMillis(HOLD_MS);
            }
        }).withErrors(new ProviderConformance.Errors() {
            @Override
            public void before() {
                Sandbox.faults(with(base, "errorBeforeExecuteRate", 1.0));
            }

            @Override
            public void after() {
                Sandbox.faults(base);
            }
        }).withKeyWindow(KEY_WINDOW);
    }

    private static Report check(String mode, URL sandbox, Options options) throws Exception {
        Report report = ProviderConformance.check(sandbox.toURI(), options);
        System.out.print("sandbox " + mode + ": " + report.table());
        TABLE.put(mode, report);
        return report;
    }

    @AfterAll
    static void printTheTable() {
        System.out.println();
        System.out.print("conformance kit, sandbox mode by obligation:\n" + ProviderConformance.matrix(TABLE));
    }

    private static Map<String, Object> with(Map<String, Object> base, String key, Object value) {
        Map<String, Object> faults = new HashMap<>(base);
        faults.put(key, value);
        return faults;
    }

    @Test
    void theIdempotentSandboxKeepsEveryObligation() throws Exception {
        Report report = check("idempotent:true", sandbox, throughFaults(Map.of("idempotent", true)));
        assertEquals(EnumSet.allOf(Obligation.class), report.holding(), report.table());
    }

    @Test
    void theNonIdempotentSandboxBreaksOnlyTheKeyObligations() throws Exception {
        Report report = check("idempotent:false", sandbox, throughFaults(Map.of("idempotent", false)));
        assertEquals(EnumSet.of(Obligation.AT_MOST_ONCE_PER_KEY, Obligation.REJECTIONS_ARE_FINAL,
                Obligation.KEEPS_KEYS_FOR_THE_STATED_WINDOW), report.failing(), report.table());
    }

    @Test
    void aSandboxClockBehindBreaksOnlyTheClockObligation() throws Exception {
        Report report = check("clockOffsetMs:-3000", sandbox, throughFaults(Map.of("idempotent", true, "clockOffsetMs", -3000)));
        assertEquals(EnumSet.of(Obligation.CLOCK_WITHIN_BOUND), report.failing(), report.table());
    }

    /**
     * The lag is long beside what the kit waits without a stated lag (the drop after a third of the hold, then its
     * slack): a machine slow enough to stretch that wait by a second still has the lookup answer 404 inside it.
     */
    @Test
    void aLaggingLookupBreaksTheContractUnlessTheLagIsStated() throws Exception {
        Map<String, Object> lagging = Map.of("idempotent", true, "lookupLagMs", 2000);
        Report unstated = check("lookupLagMs:2000 unstated", sandbox, throughFaults(lagging));
        assertEquals(EnumSet.of(Obligation.LOOKUP_REFLECTS_COMPLETION, Obligation.LOOKUP_COVERS_UNANSWERED_SENDS),
                unstated.failing(), unstated.table());

        Report stated = check("lookupLagMs:2000 stated", sandbox, throughFaults(lagging).withLookupLag(Duration.ofMillis(2500)));
        assertEquals(EnumSet.allOf(Obligation.class), stated.holding(), stated.table());
    }
}
