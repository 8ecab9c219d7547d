package dev.ledgerline.transfers.pipeline;

import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.transfer.TransferRepository;
import dev.ledgerline.transfers.transfer.Claim;
import dev.ledgerline.transfers.transfer.TransferStatus;

import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;

/**
 * Transfers written straight into the table, in a state the pipeline's own paths reach only by a race (a send
 * still in flight, an operator's resume, a lease that ran out), so a test can put one rule of the claim, the
 * reconciler's take or the fence against that state without waiting for the race. {@code next_attempt_at =
 * 'infinity'} keeps the sweeper away from a row: only the test's own statements touch it.
 */
final class HandMadeRows {

    static final Duration WAIT = Duration.ofSeconds(10);

    private HandMadeRows() {
    }

    /**
     * A transfer of {@code amount} in {@code status} at version 0; {@code sendNotAfter} and {@code nextAttemptAt} are
     * SQL expressions ({@code "now() + interval '2 seconds'"}, {@code "NULL"}, {@code "'infinity'"}).
     */
    static String insert(String status, long amount, String sendNotAfter, String nextAttemptAt) {
        return insert(status, amount, sendNotAfter, nextAttemptAt, "NULL");
    }

    /** {@link #insert(String, long, String, String)} scheduled for {@code executeAt}, an SQL expression too. */
    static String insert(String status, long amount, String sendNotAfter, String nextAttemptAt, String executeAt) {
        String id = UUID.randomUUID().toString();
        Db.update("INSERT INTO transfers (id, user_id, idempotency_key, request_fingerprint, amount, currency, destination_iban, "
                        + "destination_name, provider_reference, status, send_not_after, next_attempt_at, execute_at, last_actor) "
                        + "VALUES (?::uuid, 'by-hand', ?, 'fp', ?, 'EUR', ?, 'Ada Lovelace', ?, ?, " + sendNotAfter + ", "
                        + nextAttemptAt + ", " + executeAt + ", 'test')",
                id, "by-hand-" + id, amount, Api.IBAN, "ll_" + id.replace("-", ""), status);
        return id;
    }

    /** The deadline the row's last send carried. */
    static Instant sendNotAfter(String id) {
        return ((Timestamp) Db.query("SELECT send_not_after FROM transfers WHERE id = ?::uuid", id).get(0).get("send_not_after"))
                .toInstant();
    }

    /** PostgreSQL's clock now (the clock every deadline is written in). */
    static Instant databaseClock() {
        return ((Timestamp) Db.query("SELECT clock_timestamp() AS now").get(0).get("now")).toInstant();
    }

    /** When a claim was taken, on PostgreSQL's clock: its lease started then. */
    static Instant claimedAt(Claim claim, Duration lease) {
        return claim.leaseExpiresAt().toInstant().minus(lease);
    }

    /** Ends a transfer a test claimed by hand (nothing was sent), so the pipeline never sends it. */
    static void finish(TransferRepository repository, UUID id, long version, UUID token) {
        repository.fence(id, version, token, TransferStatus.FAILED, "test: claimed by hand", Duration.ZERO, "test",
                "test: finished by hand", false).await().atMost(WAIT);
    }
}
