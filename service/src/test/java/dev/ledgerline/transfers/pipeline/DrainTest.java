package dev.ledgerline.transfers.pipeline;

import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.Sandbox;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A backlog drains at the pace of the pipeline, not one batch per tick: the sweeper's tick is an hour here,
 * its batch 10 rows and its share of the in-flight budget 6, yet one sweep takes a backlog twenty batches
 * deep to {@code sent}, each transfer executed once.
 */
@QuarkusTest
@TestProfile(DrainTest.OneTickAnHour.class)
class DrainTest {

    public static class OneTickAnHour implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("ledgerline.pipeline.sweep-every", "1h",
                    "ledgerline.pipeline.sweep-batch", "10",
                    "ledgerline.pipeline.max-in-flight", "8",
                    "ledgerline.pipeline.accept-reserve", "2");
        }
    }

    private static final int BACKLOG = 200;

    @Inject
    Sweeper sweeper;

    @AfterEach
    void healthyProvider() {
        Sandbox.reset();
    }

    @Test
    void oneSweepDrainsABacklogManyBatchesDeep() {
        Sandbox.faults(Map.of("idempotent", false));
        String owner = "drain-" + UUID.randomUUID();
        // rows as an instance that died right after its commits would leave them: pending, due, never dispatched
        Db.update("""
                INSERT INTO transfers (id, user_id, idempotency_key, request_fingerprint, amount, currency, destination_iban,
                                       destination_name, provider_reference, next_attempt_at, last_actor, last_reason)
                SELECT gen_random_uuid(), ?, 'key-' || g, 'fingerprint', 100 + g, 'EUR', 'DE89370400440532013000', 'Ada',
                       'll_' || replace(gen_random_uuid()::text, '-', ''), now() - interval '5 seconds', 'test', 'accepted'
                  FROM generate_series(1, ?) g""", owner, BACKLOG);

        sweeper.sweep().await().atMost(Duration.ofSeconds(60));

        // one sweep, twenty batches: every row of the backlog was claimed (no tick came in between)
        Awaitility.await("one sweep claims the whole backlog").atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(250))
                .conditionEvaluationListener(c -> {
                    if (!c.isSatisfied() && c.getRemainingTimeInMS() < 500) {
                        System.out.println("DrainTest: rows by status " + byStatus(owner));
                    }
                })
                .until(() -> Db.count("SELECT count(*) FROM transfers WHERE user_id = ? AND status = 'pending'", owner) == 0);

        // what a slow machine parked in reconciling (lease too short to send) is settled by later sweeps
        Awaitility.await("the whole backlog ends sent").atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(500))
                .until(() -> {
                    sweeper.sweep().await().atMost(Duration.ofSeconds(30));
                    return Db.count("SELECT count(*) FROM transfers WHERE user_id = ? AND status = 'sent'", owner) == BACKLOG;
                });
        for (var row : Db.query("SELECT provider_reference FROM transfers WHERE user_id = ?", owner)) {
            assertEquals(1, Sandbox.executions((String) row.get("provider_reference")), "exactly one execution per transfer");
        }
    }

    private static Object byStatus(String owner) {
        return Db.query("SELECT status, count(*) FROM transfers WHERE user_id = ? GROUP BY status", owner);
    }
}
