package dev.ledgerline.transfers.support;

import java.time.OffsetDateTime;
import java.util.List;
import java.util.UUID;

/**
 * One transfer's row and history as the database holds them, read with {@link Db}, and rows written by hand for
 * a test that needs a transfer no worker touches.
 */
public final class Rows {

    private Rows() {
    }

    /** The provider reference the transfer is sent under. */
    public static String reference(String id) {
        return (String) Db.query("SELECT provider_reference FROM transfers WHERE id = ?::uuid", id).get(0).get("provider_reference");
    }

    /** The statuses the transfer moved to, in version order, its first ({@code pending}) included. */
    public static List<String> history(String id) {
        return Db.query("SELECT to_status FROM transfer_events WHERE transfer_id = ?::uuid ORDER BY version", id)
                .stream().map(r -> (String) r.get("to_status")).toList();
    }

    /** The reason each of the transfer's events gives, in version order ({@code "null"} where it gave none). */
    public static List<String> reasons(String id) {
        return Db.query("SELECT reason FROM transfer_events WHERE transfer_id = ?::uuid ORDER BY version", id)
                .stream().map(r -> String.valueOf(r.get("reason"))).toList();
    }

    /** A pending transfer no worker will touch for an hour, at version 0. */
    public static String parkedPending(String owner) {
        return parked(owner, "pending", 0);
    }

    /** A transfer row in {@code status} that no worker will touch for an hour, last changed {@code minutesAgo} minutes ago. */
    public static String parked(String owner, String status, int minutesAgo) {
        return insertParked(owner, status, "now() - make_interval(mins => " + minutesAgo + ")");
    }

    /**
     * A transfer row in {@code status} that no worker will touch for an hour, created and last changed at {@code at}
     * exactly, so that a test can give two transfers the same {@code created_at}.
     */
    public static String parkedAt(String owner, String status, OffsetDateTime at) {
        return insertParked(owner, status, "'" + at + "'::timestamptz");
    }

    private static String insertParked(String owner, String status, String at) {
        String id = UUID.randomUUID().toString();
        Db.update("INSERT INTO transfers (id, user_id, idempotency_key, request_fingerprint, amount, currency, destination_iban, "
                        + "destination_name, provider_reference, status, next_attempt_at, last_actor, created_at, updated_at) "
                        + "VALUES (?::uuid, ?, ?, 'fp', 10, 'EUR', 'DE89370400440532013000', 'Ada', ?, ?, now() + interval '1 hour', "
                        + "'test', " + at + ", " + at + ")",
                id, owner, "parked-" + id, "ll_" + id.replace("-", ""), status);
        return id;
    }
}
