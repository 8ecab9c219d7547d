package dev.ledgerline.transfers.hashing;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * SHA-256 of a text as lower-case hex: request fingerprints ({@code idempotency.Fingerprint}) and the Redis
 * keys built from client input ({@code idempotency}, {@code ratelimit}), so no client string shapes the key space.
 */
public final class Sha256 {

    private Sha256() {
    }

    /** Cloned per call: cheaper than a provider look-up by name, and a clone is never shared between threads. */
    private static final MessageDigest PROTOTYPE;

    static {
        try {
            PROTOTYPE = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }

    public static String hex(String text) {
        return HexFormat.of().formatHex(digest().digest(text.getBytes(StandardCharsets.UTF_8)));
    }

    private static MessageDigest digest() {
        try {
            return (MessageDigest) PROTOTYPE.clone();
        } catch (CloneNotSupportedException e) {
            try {
                return MessageDigest.getInstance("SHA-256");
            } catch (NoSuchAlgorithmException impossible) {
                throw new IllegalStateException("SHA-256 is part of every JDK", impossible);
            }
        }
    }
}
