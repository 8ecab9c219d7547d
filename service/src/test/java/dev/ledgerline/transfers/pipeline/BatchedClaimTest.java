package dev.ledgerline.transfers.pipeline;

import dev.ledgerline.devstack.LocalPostgres;
import dev.ledgerline.transfers.metrics.ServiceMeters;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.TestStack;
import dev.ledgerline.transfers.transfer.Claim;
import dev.ledgerline.transfers.transfer.Seen;
import dev.ledgerline.transfers.transfer.TransferRepository;
import dev.ledgerline.transfers.transfer.TransferStatus;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.distribution.CountAtBucket;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Claims asked for while one is in flight share the next statement, and each is still decided by its own conditions:
 * the rows whose status and version are what their callers saw are claimed (each with its own token, lease and event),
 * and in the same statement a stale view, a send whose deadline has not settled and a scheduled transfer not yet due
 * are refused and left untouched. Two claims of one version never share a statement, and only the first wins.
 */
@QuarkusTest
class BatchedClaimTest {

    private static final long WAIT_S = 10;
    private static final Duration LEASE = Duration.ofSeconds(30);
    private static final String WORKER = "batch-worker";

    @Inject
    TransferRepository repository;

    @Inject
    @ServiceMeters
    MeterRegistry metrics;

    @Test
    void claimsThatShareAStatementAreEachDecidedByTheirOwnConditions() throws Exception {
        String first = HandMadeRows.insert("pending", 10, "NULL", "'infinity'");
        String a = HandMadeRows.insert("pending", 11, "NULL", "'infinity'");
        String b = HandMadeRows.insert("pending", 12, "NULL", "'infinity'");
        String stale = HandMadeRows.insert("pending", 13, "NULL", "'infinity'");
        // its last send's deadline is a minute away, and the settle time after it too, so no resend may be claimed (a
        // deadline of now() was the case once, and a test slowed past the settle time on a loaded machine claimed it)
        String unsettled = HandMadeRows.insert("reconciling", 14, "now() + interval '1 minute'", "'infinity'");
        String scheduled = HandMadeRows.insert("pending", 15, "NULL", "'infinity'", "now() + interval '1 hour'");
        double batchesOfFiveOrMore = batchesOfFiveOrMore();

        CompletableFuture<Claim> firstClaim, claimA, claimB, claimStale, claimUnsettled, claimScheduled, claimAAgain;
        // the first claim goes alone and waits for this row lock; the ones asked for meanwhile share the next statement
        try (Connection holder = DriverManager.getConnection(TestStack.current().postgres().jdbcUrl(), LocalPostgres.USER, "")) {
            holder.setAutoCommit(false);
            try (PreparedStatement lock = holder.prepareStatement("SELECT 1 FROM transfers WHERE id = ?::uuid FOR UPDATE")) {
                lock.setString(1, first);
                lock.executeQuery().close();
            }
            firstClaim = claim(first, TransferStatus.PENDING, 0);
            claimA = claim(a, TransferStatus.PENDING, 0);
            claimB = claim(b, TransferStatus.PENDING, 0);
            claimStale = claim(stale, TransferStatus.PENDING, 3);
            claimUnsettled = claim(unsettled, TransferStatus.RECONCILING, 0);
            claimScheduled = claim(scheduled, TransferStatus.PENDING, 0);
            claimAAgain = claim(a, TransferStatus.PENDING, 0);
            holder.commit();
        }

        Claim won = firstClaim.get(WAIT_S, TimeUnit.SECONDS);
        Claim wonA = claimA.get(WAIT_S, TimeUnit.SECONDS);
        Claim wonB = claimB.get(WAIT_S, TimeUnit.SECONDS);
        assertNotNull(won);
        assertNotNull(wonA, "a row at the version its caller saw is claimed in the batch");
        assertNotNull(wonB);
        assertNull(claimStale.get(WAIT_S, TimeUnit.SECONDS), "a stale view is refused in the batch");
        assertNull(claimUnsettled.get(WAIT_S, TimeUnit.SECONDS), "a resend before the last send settled is refused in the batch");
        assertNull(claimScheduled.get(WAIT_S, TimeUnit.SECONDS), "a transfer not yet due is refused in the batch");
        assertNull(claimAAgain.get(WAIT_S, TimeUnit.SECONDS), "the second claim of one version went in a later statement, and lost");
        assertTrue(batchesOfFiveOrMore() > batchesOfFiveOrMore, "the five claims asked for meanwhile shared one statement");

        // what each caller heard is its own row, as PostgreSQL holds it
        Set<UUID> tokens = new HashSet<>();
        for (Map.Entry<String, Claim> c : Map.of(first, won, a, wonA, b, wonB).entrySet()) {
            Map<String, Object> row = row(c.getKey());
            assertEquals("processing", row.get("status"), c.getKey());
            assertEquals(1L, row.get("version"));
            assertEquals(c.getValue().version(), 1L);
            assertEquals(WORKER, row.get("claimed_by"));
            assertEquals(c.getValue().token(), row.get("claim_token"), "the caller holds its own row's token");
            assertEquals(List.of(Map.of("from_status", "pending", "to_status", "processing", "actor", WORKER)), events(c.getKey()),
                    "one event for the claim");
            tokens.add(c.getValue().token());
        }
        assertEquals(3, tokens.size(), "every claim has a token of its own");
        assertEquals(Set.of(11L, 12L), Set.of(wonA.amount(), wonB.amount()), "each caller reads its own row's payment");
        for (String untouched : List.of(stale, unsettled, scheduled)) {
            assertEquals(0L, row(untouched).get("version"), "a refused claim writes nothing: " + untouched);
            assertEquals(List.of(), events(untouched));
        }

        for (Map.Entry<String, Claim> c : Map.of(first, won, a, wonA, b, wonB).entrySet()) {
            HandMadeRows.finish(repository, UUID.fromString(c.getKey()), 1, c.getValue().token());
        }
    }

    private CompletableFuture<Claim> claim(String id, TransferStatus status, long version) {
        return repository.claim(new Seen(UUID.fromString(id), status, version), WORKER, LEASE, "test: batched claim")
                .subscribeAsCompletionStage();
    }

    private static Map<String, Object> row(String id) {
        return Db.query("SELECT status, version, claimed_by, claim_token FROM transfers WHERE id = ?::uuid", id).get(0);
    }

    private static List<Map<String, Object>> events(String id) {
        return Db.query("SELECT from_status, to_status, actor FROM transfer_events WHERE transfer_id = ?::uuid ORDER BY version", id);
    }

    /** Claim statements of five claims or more so far: all of them less those in the buckets up to 4. */
    private double batchesOfFiveOrMore() {
        DistributionSummary sizes = metrics.find("ledgerline.claim.batch.size").summary();
        if (sizes == null) {
            return 0;
        }
        double upToFour = 0;
        for (CountAtBucket bucket : sizes.takeSnapshot().histogramCounts()) {
            if (bucket.bucket() == 4) {
                upToFour = bucket.count();
            }
        }
        return sizes.count() - upToFour;
    }
}
