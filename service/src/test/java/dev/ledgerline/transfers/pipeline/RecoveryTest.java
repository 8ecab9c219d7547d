package dev.ledgerline.transfers.pipeline;

import dev.ledgerline.transfers.config.Breaker;
import dev.ledgerline.transfers.provider.ProviderGuards;
import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.Metrics;
import dev.ledgerline.transfers.support.Rows;
import dev.ledgerline.transfers.support.Sandbox;
import dev.ledgerline.transfers.support.TestStack;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static dev.ledgerline.transfers.support.Api.writer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * After a provider outage, the transfers it left in {@code reconciling} do not wait out their back-off once the
 * provider answers again (docs/operating.md "After a provider outage"). Here every send of the outage is fenced with a
 * two-minute back-off; once the provider is back they reach {@code sent} within 30 seconds, each executed once.
 */
@QuarkusTest
@TestProfile(RecoveryTest.LongBackOff.class)
class RecoveryTest {

    public static class LongBackOff implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            // the production provider timeout (and a lease and lock above it): a lookup on a loaded test machine
            // must not time out, which would only double its back-off again
            return Map.of("ledgerline.pipeline.retry-backoff", "PT120S",
                    "ledgerline.pipeline.max-retry-backoff", "PT10M",
                    "ledgerline.provider.timeout-ms", "5000",
                    "ledgerline.pipeline.lease", "PT10S",
                    "ledgerline.pipeline.lock-ttl", "PT10S");
        }
    }

    /** Far below the back-off, and far above what the recovery takes (breaker trial calls, a lookup, a send). */
    private static final Duration RECOVERY_BOUND = Duration.ofSeconds(30);

    @Inject
    ProviderGuards breakers;

    @AfterEach
    void healthyProvider() {
        Sandbox.reset();
        TestStack.closeBreakers();
    }

    @Test
    void reconcilingTransfersOfAnOutageAreSentSoonAfterTheProviderRecoversExactlyOnce() {
        // the outage: every send answers 503 before executing, every lookup 503
        Sandbox.faults(Map.of("idempotent", false, "errorBeforeExecuteRate", 1.0, "lookupErrorRate", 1.0));
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            ids.add(Api.create(writer("recovery"), 700 + i));
        }
        Awaitility.await("the outage opens the send breaker").atMost(RECOVERY_BOUND)
                .until(() -> breakers.sendState() == Breaker.State.OPEN);
        Awaitility.await("the outage leaves transfers reconciling").atMost(RECOVERY_BOUND)
                .until(() -> count(ids, "status = 'reconciling'") >= 10);
        List<String> reconciling = Db.query("SELECT id::text AS id FROM transfers WHERE id = ANY(?::uuid[]) AND status = 'reconciling'",
                (Object) ids.toArray(String[]::new)).stream().map(row -> (String) row.get("id")).toList();
        assertEquals(reconciling.size(), count(reconciling, "next_attempt_at > now() + interval '60 seconds'"),
                "every reconciling transfer waits out a back-off of more than a minute");
        assertEquals(0, count(ids, "status IN ('sent', 'failed')"), "an outage neither sends nor fails a transfer");

        // the provider is back, and so is the traffic
        Sandbox.faults(Map.of("idempotent", false));
        for (int i = 0; i < 2; i++) {
            ids.add(Api.create(writer("recovery"), 800 + i));
        }

        Awaitility.await("every transfer is sent well within the back-off it had").atMost(RECOVERY_BOUND)
                .pollInterval(Duration.ofMillis(200))
                .until(() -> count(ids, "status = 'sent'") == ids.size());
        for (String id : ids) {
            assertEquals(1, Sandbox.executions(Rows.reference(id)), "exactly one execution per transfer: " + id);
        }
        for (String id : reconciling) {
            assertTrue(Rows.reasons(id).contains("lookup: not found, resending"),
                    "looked up before it was sent again: " + Rows.reasons(id));
        }
        assertTrue(Metrics.sum("ledgerline_sweeper_hastened_total", "") >= reconciling.size(),
                "the sweeper reports the back-offs it cut short");
    }

    private static long count(List<String> ids, String condition) {
        return Db.count("SELECT count(*) FROM transfers WHERE id = ANY(?::uuid[]) AND " + condition,
                (Object) ids.toArray(String[]::new));
    }
}
