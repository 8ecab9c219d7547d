package dev.ledgerline.transfers.transfer;

import dev.ledgerline.devstack.LocalPostgres;
import dev.ledgerline.transfers.metrics.ServiceMeters;
import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.TestStack;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.distribution.CountAtBucket;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.pgclient.PgException;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A fence PostgreSQL cannot store — a failure reason with a NUL character, which {@code text} refuses — shares
 * its batch statement with the fences of other transfers. It fails only itself: its neighbours are written.
 */
@QuarkusTest
class PoisonedFenceTest {

    private static final long WAIT_S = 10;

    /** The token the claim wrote, which the fence must carry. */
    private static final UUID CLAIM_TOKEN = UUID.randomUUID();

    @Inject
    TransferRepository transfers;

    @Inject
    @ServiceMeters
    MeterRegistry metrics;

    @Test
    void aReasonPostgresCannotStoreFailsOnlyItsOwnFenceNotItsNeighboursInTheBatch() throws Exception {
        String first = claimedTransfer(), before = claimedTransfer(), poisoned = claimedTransfer(), after = claimedTransfer();
        double batchesOfThreeOrMore = batchesOfThreeOrMore();

        CompletableFuture<Boolean> firstFenced, beforeFenced, poisonedFenced, afterFenced;
        // the first fence goes alone and waits for this row lock; the three asked for meanwhile share the next statement
        try (Connection holder = DriverManager.getConnection(TestStack.current().postgres().jdbcUrl(), LocalPostgres.USER, "")) {
            holder.setAutoCommit(false);
            try (PreparedStatement lock = holder.prepareStatement("SELECT 1 FROM transfers WHERE id = ?::uuid FOR UPDATE")) {
                lock.setString(1, first);
                lock.executeQuery().close();
            }
            firstFenced = rejected(first, "insufficient funds");
            beforeFenced = rejected(before, "insufficient funds");
            poisonedFenced = rejected(poisoned, "insufficient\u0000funds");
            afterFenced = rejected(after, "insufficient funds");
            holder.commit();
        }

        assertTrue(firstFenced.get(WAIT_S, TimeUnit.SECONDS));
        assertTrue(beforeFenced.get(WAIT_S, TimeUnit.SECONDS), "the neighbour queued before the poisoned fence is written");
        assertTrue(afterFenced.get(WAIT_S, TimeUnit.SECONDS), "the neighbour queued after the poisoned fence is written");
        ExecutionException failed = assertThrows(ExecutionException.class, () -> poisonedFenced.get(WAIT_S, TimeUnit.SECONDS));
        assertInstanceOf(PgException.class, failed.getCause(), "PostgreSQL refused the poisoned fence: " + failed.getCause());
        assertTrue(batchesOfThreeOrMore() > batchesOfThreeOrMore, "the three fences shared one batch statement (with any others that were due)");

        for (String id : List.of(first, before, after)) {
            assertEquals(Map.of("status", "failed", "version", 2L, "failure_reason", "insufficient funds"), row(id));
        }
        assertEquals("processing", row(poisoned).get("status"), "the poisoned row is left as its claim wrote it");
        assertEquals(1L, row(poisoned).get("version"));

        // the poisoned transfer is not wedged: the same fence with a reason PostgreSQL can store is written
        assertTrue(rejected(poisoned, "insufficient funds").get(WAIT_S, TimeUnit.SECONDS));
        assertEquals(Map.of("status", "failed", "version", 2L, "failure_reason", "insufficient funds"), row(poisoned));
    }

    /** A transfer as a claim leaves it: processing at version 1, its lease far enough away that no sweeper touches it. */
    private static String claimedTransfer() {
        String id = UUID.randomUUID().toString();
        Db.update("INSERT INTO transfers (id, user_id, idempotency_key, request_fingerprint, amount, currency, destination_iban, "
                        + "destination_name, provider_reference, status, version, claimed_by, claim_token, lease_expires_at, last_actor) "
                        + "VALUES (?::uuid, 'poisoned-fence', ?, 'fp', 10, 'EUR', ?, 'Ada Lovelace', ?, 'processing', 1, 'test-worker', "
                        + "?::uuid, now() + interval '1 hour', 'test')",
                id, "poisoned-" + id, Api.IBAN, "ll_" + id.replace("-", ""), CLAIM_TOKEN.toString());
        return id;
    }

    /** The fence a worker writes when the provider rejected its send with {@code failureReason}. */
    private CompletableFuture<Boolean> rejected(String id, String failureReason) {
        return transfers.fence(UUID.fromString(id), 1, CLAIM_TOKEN, TransferStatus.FAILED, failureReason, Duration.ZERO, "test-worker",
                "provider rejected", false).subscribeAsCompletionStage();
    }

    private static Map<String, Object> row(String id) {
        return Db.query("SELECT status, version, failure_reason FROM transfers WHERE id = ?::uuid", id).get(0);
    }

    /**
     * Batch statements of three fences or more so far: all batches less those in bucket 2 of
     * {@code ledgerline_fence_batch_size_fences}. More than three when the sweeper's fences of other transfers joined.
     */
    private double batchesOfThreeOrMore() {
        // registered with the repository, which is created on its first use
        DistributionSummary sizes = metrics.find("ledgerline.fence.batch.size").summary();
        if (sizes == null) {
            return 0;
        }
        var snapshot = sizes.takeSnapshot();
        double upTo2 = 0;
        for (CountAtBucket bucket : snapshot.histogramCounts()) {
            if (bucket.bucket() == 2) {
                upTo2 = bucket.count();
            }
        }
        return snapshot.count() - upTo2;
    }
}
