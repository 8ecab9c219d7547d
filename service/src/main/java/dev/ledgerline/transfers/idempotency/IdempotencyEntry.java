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
 *   <li>the same with what a replay answers from, {@code S|fingerprint|<stamp>|<body>|<response>|{transfer as JSON}},
 *       each of the three length-prefixed ({@code <length>:<text>}): a request body that was found to be this request,
 *       the response body a client gets for the transfer, and the stamp of the request rules and response shape both
 *       were made under ({@link ResponseBodies#stamp}). A request with exactly those bytes under the same stamp is this
 *       request without parsing it, and its answer is the stored response without writing it again. Earlier releases
 *       read an {@code S} entry as not theirs, and the database decides for them.</li>
 * </ul>
 */
record IdempotencyEntry(Kind kind, String fingerprint, String token, UUID transferId, Transfer last, Instant createdAt,
                        String stamp, String body, String response) {

    enum Kind { IN_FLIGHT, COMPLETED, FINAL }

    static IdempotencyEntry inFlight(String token, String fingerprint) {
        return new IdempotencyEntry(Kind.IN_FLIGHT, fingerprint, token, null, null, null, null, null, null);
    }

    /** {@code createdAt}: when the transfer was created, {@code null} when the entry does not say. */
    static IdempotencyEntry completed(String fingerprint, UUID transferId, Instant createdAt) {
        return new IdempotencyEntry(Kind.COMPLETED, fingerprint, null, transferId, null, createdAt, null, null, null);
    }

    /** For a transfer in a final status only. */
    static IdempotencyEntry finalState(Transfer transfer) {
        if (!transfer.status().isTerminal()) {
            throw new IllegalArgumentException("only a sent, failed or cancelled transfer is final, not " + transfer.status());
        }
        return new IdempotencyEntry(Kind.FINAL, transfer.requestFingerprint(), null, transfer.id(), transfer,
                transfer.createdAt().toInstant(), null, null, null);
    }

    /**
     * A final entry that also keeps {@code body}, a request body found to be this transfer's request, and
     * {@code response}, the body a replay answers, both made under {@code stamp}.
     */
    static IdempotencyEntry finalState(Transfer transfer, String stamp, String body, String response) {
        IdempotencyEntry plain = finalState(transfer);
        return new IdempotencyEntry(Kind.FINAL, plain.fingerprint, null, plain.transferId, transfer, plain.createdAt,
                stamp, body, response);
    }

    /** Whether {@code body} is, byte for byte, the request body this entry keeps, under the same {@code stamp}. */
    boolean keeps(byte[] body, String stamp) {
        return this.body != null && body != null && this.stamp.equals(stamp)
                && java.util.Arrays.equals(this.body.getBytes(java.nio.charset.StandardCharsets.UTF_8), body);
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
            case FINAL -> response == null ? "F|" + fingerprint + "|" + toJson(last)
                    : "S|" + fingerprint + "|" + counted(stamp) + counted(body) + counted(response) + toJson(last);
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
                case "S" -> {
                    String rest = parts[2];
                    int[] at = {0};
                    String stamp = uncounted(rest, at);
                    String body = uncounted(rest, at);
                    String response = uncounted(rest, at);
                    Transfer t = fromJson(rest.substring(at[0]));
                    yield t.requestFingerprint().equals(parts[1]) && t.status().isTerminal()
                            ? finalState(t, stamp, body, response) : null;
                }
                default -> null;
            };
        } catch (RuntimeException garbled) {
            return null;
        }
    }

    /** {@code <length>:<text>}, so the text may hold any character. */
    private static String counted(String text) {
        return text.length() + ":" + text;
    }

    /** The counted text at {@code at[0]}, which moves past it; fails on anything else. */
    private static String uncounted(String s, int[] at) {
        int colon = s.indexOf(':', at[0]);
        int length = Integer.parseInt(s.substring(at[0], colon));
        if (length < 0 || colon + 1 + length > s.length()) {
            throw new IllegalArgumentException("a counted text beyond the entry");
        }
        at[0] = colon + 1 + length;
        return s.substring(colon + 1, at[0]);
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
