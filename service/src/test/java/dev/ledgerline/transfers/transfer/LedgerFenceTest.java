package dev.ledgerline.transfers.transfer;

import dev.ledgerline.devstack.LocalPostgres;
import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.TestStack;
import io.quarkus.test.junit.QuarkusTest;
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
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The fence moves money exactly when it moves the transfer: a fence that lands posts ({@code sent}) or releases
 * ({@code failed}) the hold in its own statement, a stale one (another version or claim token, zero rows) moves no
 * balance, and a batch that ends several transfers of one account moves it by their sum.
 */
@QuarkusTest
class LedgerFenceTest {

    private static final long WAIT_S = 10;
    private static final UUID CLAIM_TOKEN = UUID.randomUUID();

    @Inject
    TransferRepository transfers;

    @Test
    void aStaleFenceMovesNoBalanceAndTheFenceThatLandsPostsOnce() throws Exception {
        String principal = account(10_000, 1_250);
        String id = claimedTransfer(principal, 1_250);

        assertFalse(fence(id, 0, CLAIM_TOKEN, TransferStatus.SENT).get(WAIT_S, TimeUnit.SECONDS), "another version");
        assertFalse(fence(id, 1, UUID.randomUUID(), TransferStatus.SENT).get(WAIT_S, TimeUnit.SECONDS), "another claim token");
        assertEquals(List.of(10_000L, 1_250L), balance(principal), "stale fences moved nothing");
        assertEquals(0, Db.count("SELECT count(*) FROM ledger_entries WHERE transfer_id = ?::uuid AND kind = 'post'", id));

        assertTrue(fence(id, 1, CLAIM_TOKEN, TransferStatus.SENT).get(WAIT_S, TimeUnit.SECONDS));
        assertEquals(List.of(8_750L, 0L), balance(principal), "posted: posted and held both went down by the amount");

        // the same worker's fence again, or a second worker's that held the same version: stale now
        assertFalse(fence(id, 1, CLAIM_TOKEN, TransferStatus.FAILED).get(WAIT_S, TimeUnit.SECONDS));
        assertEquals(List.of(8_750L, 0L), balance(principal));
        assertEquals(1, Db.count("SELECT count(*) FROM ledger_entries WHERE transfer_id = ?::uuid AND kind IN ('post', 'release')", id));
    }

    @Test
    void aFenceToReconcilingKeepsTheHold() throws Exception {
        String principal = account(10_000, 700);
        String id = claimedTransfer(principal, 700);
        assertTrue(fence(id, 1, CLAIM_TOKEN, TransferStatus.RECONCILING).get(WAIT_S, TimeUnit.SECONDS));
        assertEquals(List.of(10_000L, 700L), balance(principal), "the outcome is unknown: the hold stays");
    }

    @Test
    void oneBatchEndingTwoTransfersOfOneAccountMovesItByBoth() throws Exception {
        String principal = account(10_000, 3_000);
        String sent = claimedTransfer(principal, 1_000);
        String failed = claimedTransfer(principal, 2_000);
        String blocker = claimedTransfer(account(10_000, 5), 5);
        CompletableFuture<Boolean> first, a, b;
        // the first fence goes alone and waits for this row lock; the two asked for meanwhile share the next statement
        try (Connection holder = DriverManager.getConnection(TestStack.current().postgres().jdbcUrl(), LocalPostgres.USER, "")) {
            holder.setAutoCommit(false);
            try (PreparedStatement lock = holder.prepareStatement("SELECT 1 FROM transfers WHERE id = ?::uuid FOR UPDATE")) {
                lock.setString(1, blocker);
                lock.executeQuery().close();
            }
            first = fence(blocker, 1, CLAIM_TOKEN, TransferStatus.SENT);
            a = fence(sent, 1, CLAIM_TOKEN, TransferStatus.SENT);
            b = fence(failed, 1, CLAIM_TOKEN, TransferStatus.FAILED);
            holder.commit();
        }
        assertTrue(first.get(WAIT_S, TimeUnit.SECONDS));
        assertTrue(a.get(WAIT_S, TimeUnit.SECONDS));
        assertTrue(b.get(WAIT_S, TimeUnit.SECONDS));
        assertEquals(List.of(9_000L, 0L), balance(principal), "1,000 posted, 2,000 released");
        assertEquals(Map.of("post", 1L, "release", 1L), kinds(principal));
    }

    private CompletableFuture<Boolean> fence(String id, long version, UUID token, TransferStatus status) {
        return transfers.fence(UUID.fromString(id), version, token, status, status == TransferStatus.FAILED ? "rejected" : null,
                Duration.ofHours(1), "test-worker", "test fence", false).subscribeAsCompletionStage();
    }

    /** An account with its opening and the holds of the transfers the test makes, as the service would have written them. */
    private static String account(long posted, long held) {
        String principal = "ledger-fence-" + UUID.randomUUID();
        Db.update("INSERT INTO accounts (principal, currency, posted, held) VALUES (?, 'EUR', ?, ?)", principal, posted, held);
        Db.update("INSERT INTO ledger_entries (principal, currency, kind, amount, account_leg, settlement_leg, held_change)"
                + " VALUES (?, 'EUR', 'opening', ?, ?, ?, 0)", principal, posted, posted, -posted);
        return principal;
    }

    /** A transfer that holds funds, as a claim leaves it: processing at version 1, its lease an hour away. */
    private static String claimedTransfer(String principal, long amount) {
        String id = UUID.randomUUID().toString();
        Db.update("INSERT INTO transfers (id, user_id, idempotency_key, request_fingerprint, amount, currency, destination_iban, "
                        + "destination_name, provider_reference, status, version, claimed_by, claim_token, lease_expires_at, last_actor, "
                        + "holds_funds) VALUES (?::uuid, ?, ?, 'fp', ?, 'EUR', ?, 'Ada Lovelace', ?, 'processing', 1, 'test-worker', "
                        + "?::uuid, now() + interval '1 hour', 'test', true)",
                id, principal, "fence-" + id, amount, Api.IBAN, "ll_" + id.replace("-", ""), CLAIM_TOKEN.toString());
        Db.update("INSERT INTO ledger_entries (principal, currency, kind, amount, account_leg, settlement_leg, held_change, transfer_id)"
                + " VALUES (?, 'EUR', 'hold', ?, 0, 0, ?, ?::uuid)", principal, amount, amount, id);
        return id;
    }

    private static List<Long> balance(String principal) {
        Map<String, Object> row = Db.query("SELECT posted, held FROM accounts WHERE principal = ? AND currency = 'EUR'", principal).get(0);
        return List.of(((Number) row.get("posted")).longValue(), ((Number) row.get("held")).longValue());
    }

    private static Map<String, Long> kinds(String principal) {
        Map<String, Long> kinds = new java.util.TreeMap<>();
        for (Map<String, Object> row : Db.query("SELECT kind, count(*) AS n FROM ledger_entries WHERE principal = ?"
                + " AND kind IN ('post', 'release') GROUP BY kind", principal)) {
            kinds.put((String) row.get("kind"), ((Number) row.get("n")).longValue());
        }
        return kinds;
    }
}
