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
import java.util.EnumSet;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The sandbox the service is developed and tested against keeps the provider contract: in its default,
 * idempotent mode every obligation holds. In {@code idempotent:false} mode — the fault suite's provider
 * without idempotency, against which the service must rely on the deadline alone — the kit names exactly
 * the two obligations that mode gives up.
 */
@QuarkusTest
class SandboxConformanceTest {

    @TestHTTPResource("/sandbox/provider")
    URL sandbox;

    @AfterEach
    void healthy() {
        Sandbox.reset();
    }

    /** The sandbox rejects while its reject rate is 1; the mode under test is kept either way. */
    private static Options rejectingThroughFaults(boolean idempotent) {
        return Options.defaults().withRejections(new ProviderConformance.Rejections() {
            @Override
            public void before() {
                Sandbox.faults(Map.of("idempotent", idempotent, "rejectRate", 1.0));
            }

            @Override
            public void after() {
                Sandbox.faults(Map.of("idempotent", idempotent, "rejectRate", 0.0));
            }
        });
    }

    @Test
    void theIdempotentSandboxKeepsEveryObligation() throws Exception {
        Sandbox.faults(Map.of("idempotent", true));
        Report report = ProviderConformance.check(sandbox.toURI(), rejectingThroughFaults(true));
        System.out.print("sandbox idempotent:true: " + report.table());
        assertEquals(EnumSet.allOf(Obligation.class), report.holding(), report.table());
    }

    @Test
    void theNonIdempotentSandboxBreaksOnlyTheKeyObligations() throws Exception {
        Sandbox.faults(Map.of("idempotent", false));
        Report report = ProviderConformance.check(sandbox.toURI(), rejectingThroughFaults(false));
        System.out.print("sandbox idempotent:false: " + report.table());
        assertEquals(EnumSet.of(Obligation.AT_MOST_ONCE_PER_KEY, Obligation.REJECTIONS_ARE_FINAL), report.failing(), report.table());
    }
}
