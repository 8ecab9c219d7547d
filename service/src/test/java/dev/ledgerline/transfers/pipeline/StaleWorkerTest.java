package dev.ledgerline.transfers.pipeline;

import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.transfers.metrics.ServiceMeters;
import dev.ledgerline.transfers.provider.ProviderGuards;
import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Await;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.Rows;
import dev.ledgerline.transfers.support.Sandbox;
import dev.ledgerline.transfers.transfer.TransferRepository;
import dev.ledgerline.transfers.transfer.Claim;
import dev.ledgerline.transfers.transfer.Seen;
import dev.ledgerline.transfers.transfer.TransferStatus;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;
import jakarta.enterprise.inject.Alternative;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import static dev.ledgerline.transfers.support.Api.writer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * A worker stuck in its provider call for longer than its lock TTL and lease (the send timeout is
 * switched off here, which is what a paused worker looks like from outside). Another worker takes the
 * transfer over through the sweeper; when the stuck one wakes up, its final UPDATE is fenced off.
 */
@QuarkusTest
@TestProfile(StaleWorkerTest.StuckInSend.class)
class StaleWorkerTest {

    public static class StuckInSend implements QuarkusTestProfile {
        @Override
        public Set<Class<?>> getEnabledAlternatives() {
            return Set.of(SendsWithoutTimeout.class);
        }
    }

    /** The provider's guards with a send timeout of an hour: a send waits as long as the provider holds it. */
    @Alternative
    @Singleton
    public static class SendsWithoutTimeout extends ProviderGuards {
        @Inject
        public SendsWithoutTimeout(Vertx vertx, LedgerlineConfig config) {
            super(vertx, config.provider(), Duration.ofHours(1));
        }
    }

    @Inject
    @ServiceMeters
    MeterRegistry metrics;

    @Inject
    TransferRepository repository;

    @AfterEach
    void healthyProvider() {
        Sandbox.reset();
    }

    @Test
    void aWorkerPausedPastItsLeaseCannotOverwriteTheNewerState() {
        // one transfer through a healthy provider first: the first send of a fresh JVM builds the provider's client,
        // which on a loaded machine can outlast the send's 1 s deadline, and then the send is never written
        Await.status(Api.create(writer("alice"), 1999), "sent", Duration.ofSeconds(15));
        double staleBefore = staleWrites();
        Sandbox.faults(Map.of("idempotent", false, "latencyMs", 6000));
        String id = Api.create(writer("alice"), 2000);

        // the lease (3 s) expires while the first worker waits; the sweeper reconciles by lookup
        Await.status(id, "sent", Duration.ofSeconds(15));
        assertEquals(List.of("pending", "processing", "reconciling", "sent"), Rows.history(id));

        // the first worker's answer arrives at ~6 s: its fenced UPDATE must change nothing, and be counted
        Awaitility.await("the stale write is fenced off and counted").atMost(Duration.ofSeconds(15))
                .until(() -> staleWrites() > staleBefore);
        assertEquals("sent", Await.dbStatus(id));
        assertEquals(List.of("pending", "processing", "reconciling", "sent"), Rows.history(id));
        Sandbox.exactlyOneExecution(id);
    }

    /**
     * The moment a worker's lease runs out its claim is void, even while nobody has taken the row since: lease
     * expiry moves the row to reconciling (its send's outcome is unknown, a lookup decides), and the worker's fence,
     * whatever its send answered, must not land. The lookup is not due before the send's deadline plus the settle
     * time, so nobody has taken the row again when the fence arrives (lease expiry cleared its claim token, and moved
     * its version on). The claim is taken by hand with a lease of one millisecond, and the sweeper's lease expiry is
     * run at once, so the fence comes well inside that window.
     */
    @Test
    void aWorkerWhoseLeaseRanOutCannotFenceEvenBeforeTheReconcilerTookTheRow() {
        String id = HandMadeRows.insert("pending", 2001, "NULL", "'infinity'");
        Claim claim = claimAsAPausingWorker(id, Duration.ofMillis(1));
        Awaitility.await("the worker's lease ran out and lease expiry moved the row to reconciling")
                .atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10))
                .until(() -> {
                    repository.expireLeases("test-sweeper", 100).await().atMost(HandMadeRows.WAIT);
                    return "reconciling".equals(Await.dbStatus(id));
                });

        boolean landed = fenceSentAsTheWorker(claim);
        Map<String, Object> row = Db.query("SELECT status, version FROM transfers WHERE id = ?::uuid", id).get(0);
        assertFalse(landed, "the fence of a worker whose lease ran out landed: " + row + ", " + Rows.reasons(id));
        assertEquals(Map.of("status", "reconciling", "version", 2L), row, "the row is as lease expiry left it");

        // the reconciler then looks it up (never sent: not found) and sends it, once
        Await.status(id, "sent", Duration.ofSeconds(15));
        Sandbox.exactlyOneExecution(id);
    }

    /**
     * An operator's transition by hand (psql, with its event, as the operations page describes) moves the version on but
     * leaves {@code claim_token} as the worker's claim wrote it. Only the version then refuses the fence of the worker
     * whose claim the operator voided: whatever that worker's send answered, the operator's state stands, and the
     * reconciler settles the transfer by a lookup.
     */
    @Test
    void aTransitionByHandFencesOffTheWorkerWhoseClaimItVoided() {
        String id = HandMadeRows.insert("pending", 2002, "NULL", "'infinity'");
        Claim claim = claimAsAPausingWorker(id, Duration.ofSeconds(30));
        Db.update("UPDATE transfers SET previous_status = status, status = 'reconciling', version = version + 1, "
                + "feed_xid = greatest(feed_xid, pg_current_xact_id()), claimed_by = NULL, lease_expires_at = NULL, next_attempt_at = now(), updated_at = now(), "
                + "last_actor = 'operator', last_reason = 'moved by hand: worker host lost' WHERE id = ?::uuid", id);
        Db.update("INSERT INTO transfer_events (transfer_id, version, from_status, to_status, actor, reason, feed_xid) "
                + "SELECT id, version, previous_status, status, last_actor, last_reason, feed_xid FROM transfers WHERE id = ?::uuid", id);
        assertEquals(claim.token(), Db.query("SELECT claim_token FROM transfers WHERE id = ?::uuid", id).get(0).get("claim_token"),
                "the hand-made transition left the worker's claim token on the row");

        boolean landed = fenceSentAsTheWorker(claim);
        Map<String, Object> row = Db.query("SELECT status, version FROM transfers WHERE id = ?::uuid", id).get(0);
        assertFalse(landed, "the fence of a claim an operator voided landed: " + row + ", " + Rows.reasons(id));
        assertEquals(Map.of("status", "reconciling", "version", 2L), row, "the row is as the operator left it");

        // the reconciler looks it up (never sent: not found) and sends it, once
        Await.status(id, "sent", Duration.ofSeconds(15));
        Sandbox.exactlyOneExecution(id);
    }

    /** The row's claim, taken by hand as the worker that is about to pause would take it. */
    private Claim claimAsAPausingWorker(String id, Duration lease) {
        Claim claim = repository.claim(new Seen(UUID.fromString(id), TransferStatus.PENDING, 0), "paused-worker",
                lease, "test: a worker about to pause").await().atMost(HandMadeRows.WAIT);
        assertNotNull(claim, "the worker claimed the row");
        return claim;
    }

    /** That worker's late fence, as if its send had completed: whether it landed. */
    private boolean fenceSentAsTheWorker(Claim claim) {
        return repository.fence(claim.id(), claim.version(), claim.token(), TransferStatus.SENT, null, Duration.ZERO,
                "paused-worker", "provider completed", false).await().atMost(HandMadeRows.WAIT);
    }

    private double staleWrites() {
        var counter = metrics.find("ledgerline.fence.stale").counter();
        return counter == null ? 0 : counter.count();
    }
}
