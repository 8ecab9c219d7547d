package dev.ledgerline.sdk;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.HexFormat;

/**
 * Verifies the {@code Ledgerline-Signature} of a webhook delivery: {@code t=<unix seconds>,v1=<hex>}, where the hex is
 * HMAC-SHA256 of {@code "<t>.<raw body>"} under the endpoint's secret (its UTF-8 bytes, {@code whsec_} prefix
 * included). Pass the body's bytes exactly as received, before any JSON parsing.
 */
public final class WebhookSignatures {

    private WebhookSignatures() {
    }

    /** {@code true} when {@code header} signs {@code body} under {@code secret} and its {@code t} is within the tolerance of now. */
    public static boolean verifySignature(String secret, String header, byte[] body, long toleranceSeconds) {
        return verifySignature(secret, header, body, toleranceSeconds, Instant.now());
    }

    public static boolean verifySignature(String secret, String header, String body, long toleranceSeconds) {
        return verifySignature(secret, header, body.getBytes(StandardCharsets.UTF_8), toleranceSeconds, Instant.now());
    }

    /** As {@link #verifySignature(String, String, byte[], long)}, against the given clock reading. */
    public static boolean verifySignature(String secret, String header, byte[] body, long toleranceSeconds, Instant now) {
        if (secret == null || header == null || body == null) {
            return false;
        }
        Long t = null;
        java.util.List<String> v1 = new java.util.ArrayList<>();
        for (String part : header.split(",")) {
            String[] kv = part.trim().split("=", 2);
            if (kv.length != 2) {
                continue;
            }
            if (kv[0].equals("t")) {
                try {
                    t = Long.parseLong(kv[1]);
                } catch (NumberFormatException e) {
                    return false;
                }
            } else if (kv[0].equals("v1")) {
                v1.add(kv[1]); // two while a rotated secret still signs beside the new one
            }
        }
        if (t == null || v1.isEmpty() || Math.abs(now.getEpochSecond() - t) > toleranceSeconds) {
            return false;
        }
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            mac.update((t + ".").getBytes(StandardCharsets.UTF_8));
            byte[] expected = HexFormat.of().formatHex(mac.doFinal(body)).getBytes(StandardCharsets.US_ASCII);
            boolean matched = false;
            for (String candidate : v1) {
                matched |= MessageDigest.isEqual(expected, candidate.getBytes(StandardCharsets.US_ASCII));
            }
            return matched;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every JDK", e);
        }
    }
}
