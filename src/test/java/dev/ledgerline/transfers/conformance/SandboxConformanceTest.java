package dev.ledgerline.transfers.conformance;

import dev.ledgerline.transfers.conformance.ProviderConformance.Obligation;
import dev.ledgerline.transfers.conformance.ProviderConformance.Options;
import dev.ledgerline.transfers.conformance.ProviderConformance.Report;
import dev.ledgerline.transfers.support.Sandbox;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.URL;
import java.time.Duration;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The sandbox the service is developed and tested against keeps the provider contract: in its default,
 * idempotent mode every obligation holds, including a send held in transit past its deadline (refused when
 * applied). In {@code idempotent:false} mode — the fault suite's provider without idempotency, against which
 * the service must rely on the deadline alone — the kit names exactly the two obligations that mode gives
 * up. A lookup lag is a breach unless stated, and waited out when it is.
 */
@QuarkusTest
class SandboxConformanceTest {

    private static final long HOLD_MS = 900;

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
        });
    }

    private static Map<String, Object> with(Map<String, Object> base, String key, Object value) {
        Map<String, Object> faults = new HashMap<>(base);
        faults.put(key, value);
        return faults;
    }

    @Test
    void theIdempotentSandboxKeepsEveryObligation() throws Exception {
        Report report = ProviderConformance.check(sandbox.toURI(), throughFaults(Map.of("idempotent", true)));
        System.out.print("sandbox idempotent:true: " + report.table());
        assertEquals(EnumSet.allOf(Obligation.class), report.holding(), report.table());
    }

    @Test
    void theNonIdempotentSandboxBreaksOnlyTheKeyObligations() throws Exception {
        Report report = ProviderConformance.check(sandbox.toURI(), throughFaults(Map.of("idempotent", false)));
        System.out.print("sandbox idempotent:false: " + report.table());
        assertEquals(EnumSet.of(Obligation.AT_MOST_ONCE_PER_KEY, Obligation.REJECTIONS_ARE_FINAL), report.failing(), report.table());
    }

    @Test
    void aLaggingLookupBreaksTheContractUnlessTheLagIsStated() throws Exception {
        Map<String, Object> lagging = Map.of("idempotent", true, "lookupLagMs", 800);
        Report unstated = ProviderConformance.check(sandbox.toURI(), throughFaults(lagging));
        System.out.print("sandbox lookupLagMs:800, no lag stated: " + unstated.table());
        assertEquals(EnumSet.of(Obligation.LOOKUP_REFLECTS_COMPLETION), unstated.failing(), unstated.table());

        Report stated = ProviderConformance.check(sandbox.toURI(), throughFaults(lagging).withLookupLag(Duration.ofMillis(1300)));
        System.out.print("sandbox lookupLagMs:800, lag stated 1300 ms: " + stated.table());
        assertEquals(EnumSet.allOf(Obligation.class), stated.holding(), stated.table());
    }
}
