package dev.ledgerline.transfers.idempotency;

import dev.ledgerline.transfers.transfer.Transfer;
import dev.ledgerline.transfers.transfer.TransferStatus;
import io.vertx.core.json.JsonObject;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.UUID;

/**
 * What Redis holds for one (principal, key):
 * <ul>
 *   <li>an in-flight marker {@code P|token|fingerprint} while the first request runs;</li>
 *   <li>a completed entry {@code C|fingerprint|transferId|createdAtEpochMillis} once the transfer is committed (entries
 *       written before the creation time was added end at the id);</li>
 *   <li>a final entry {@code F|fingerprint|{transfer as JSON}} once the transfer is {@code sent},
 *       {@code failed} or {@code cancelled}. PostgreSQL refuses any change to a row in a final status (the transition
 *       trigger), so this copy can never go stale, and a replay answered from it is the current
 *       transfer without a database read.</li>
 * </ul>
 */
record IdempotencyEntry(Kind kind, String fingerprint, String token, UUID transferId, Transfer last, Instant createdAt) {

    enum Kind { IN_FLIGHT, COMPLETED, FINAL }

    static IdempotencyEntry inFlight(String token, String fingerprint) {
        return new IdempotencyEntry(Kind.IN_FLIGHT, fingerprint, token, null, null, null);
    }

    /** {@code createdAt}: when the transfer was created, {@code null} when the entry does not say. */
    static IdempotencyEntry completed(String fingerprint, UUID transferId, Instant createdAt) {
        return new IdempotencyEntry(Kind.COMPLETED, fingerprint, null, transferId, null, createdAt);
    }

    /** For a transfer in a final status only. */
    static IdempotencyEntry finalState(Transfer transfer) {
        if (!transfer.status().isTerminal()) {
            throw new IllegalArgumentException("only a sent, failed or cancelled transfer is final, not " + transfer.status());
        }
        return new IdempotencyEntry(Kind.FINAL, transfer.requestFingerprint(), null, transfer.id(), transfer,
                transfer.createdAt().toInstant());
    }

    /** The entry to keep for a committed transfer: final when it already is, else completed. */
    static IdempotencyEntry of(Transfer transfer) {
        return transfer.status().isTerminal() ? finalState(transfer)
                : completed(transfer.requestFingerprint(), transfer.id(), transfer.createdAt().toInstant());
    }

    boolean completed() {
        return kind != Kind.IN_FLIGHT;
    }

    String encode() {
        return switch (kind) {
            case IN_FLIGHT -> "P|" + token + "|" + fingerprint;
            case COMPLETED -> "C|" + fingerprint + "|" + transferId + (createdAt == null ? "" : "|" + createdAt.toEpochMilli());
            case FINAL -> "F|" + fingerprint + "|" + toJson(last);
        };
    }

    /** {@code null} for anything that is not an entry of ours: the database then decides. */
    static IdempotencyEntry decode(String value) {
        if (value == null) {
            return null;
        }
        String[] parts = value.split("\\|", 3);
        if (parts.length != 3) {
            return null;
        }
        try {
            return switch (parts[0]) {
                case "C" -> {
                    String[] idAndTime = parts[2].split("\\|", 2);
                    yield completed(parts[1], UUID.fromString(idAndTime[0]),
                            idAndTime.length == 2 ? Instant.ofEpochMilli(Long.parseLong(idAndTime[1])) : null);
                }
                case "P" -> inFlight(parts[1], parts[2]);
                case "F" -> {
                    Transfer t = fromJson(parts[2]);
                    yield t.requestFingerprint().equals(parts[1]) && t.status().isTerminal() ? finalState(t) : null;
                }
                default -> null;
            };
        } catch (RuntimeException garbled) {
            return null;
        }
    }

    private static String toJson(Transfer t) {
        return new JsonObject()
                .put("id", t.id().toString())
                .put("userId", t.userId())
                .put("fingerprint", t.requestFingerprint())
                .put("amount", t.amount())
                .put("currency", t.currency())
                .put("iban", t.destinationIban())
                .put("name", t.destinationName())
                .put("description", t.description())
                .put("reference", t.providerReference())
                .put("status", t.status().db())
                .put("version", t.version())
                .put("failureReason", t.failureReason())
                .put("createdAt", t.createdAt().toString())
                .put("updatedAt", t.updatedAt().toString())
                .put("executeAt", t.executeAt() == null ? null : t.executeAt().toString())
                .encode();
    }

    private static Transfer fromJson(String json) {
        JsonObject o = new JsonObject(json);
        return new Transfer(UUID.fromString(o.getString("id")), required(o, "userId"), required(o, "fingerprint"),
                o.getLong("amount"), required(o, "currency"), required(o, "iban"), required(o, "name"),
                o.getString("description"), required(o, "reference"), TransferStatus.fromDb(required(o, "status")),
                o.getLong("version"), o.getString("failureReason"),
                OffsetDateTime.parse(required(o, "createdAt")), OffsetDateTime.parse(required(o, "updatedAt")),
                o.getString("executeAt") == null ? null : OffsetDateTime.parse(o.getString("executeAt")));
    }

    private static String required(JsonObject o, String field) {
        String value = o.getString(field);
        if (value == null) {
            throw new IllegalArgumentException("final entry without " + field);
        }
        return value;
    }
}
