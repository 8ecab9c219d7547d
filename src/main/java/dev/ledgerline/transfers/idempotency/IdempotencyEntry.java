package dev.ledgerline.transfers.idempotency;

import java.util.UUID;

/**
 * What Redis holds for one (principal, key): an in-flight marker ({@code P|token|fingerprint}) while the
 * first request runs, then a completed entry ({@code C|fingerprint|transferId}).
 */
record IdempotencyEntry(boolean completed, String fingerprint, String token, UUID transferId) {

    static IdempotencyEntry inFlight(String token, String fingerprint) {
        return new IdempotencyEntry(false, fingerprint, token, null);
    }

    static IdempotencyEntry completed(String fingerprint, UUID transferId) {
        return new IdempotencyEntry(true, fingerprint, null, transferId);
    }

    String encode() {
        return completed ? "C|" + fingerprint + "|" + transferId : "P|" + token + "|" + fingerprint;
    }

    /** {@code null} for anything that is not an entry of ours: the database then decides. */
    static IdempotencyEntry decode(String value) {
        if (value == null) {
            return null;
        }
        String[] parts = value.split("\\|", -1);
        if (parts.length != 3) {
            return null;
        }
        try {
            return switch (parts[0]) {
                case "C" -> completed(parts[1], UUID.fromString(parts[2]));
                case "P" -> inFlight(parts[1], parts[2]);
                default -> null;
            };
        } catch (IllegalArgumentException garbled) {
            return null;
        }
    }
}
