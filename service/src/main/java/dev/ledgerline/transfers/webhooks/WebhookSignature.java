package dev.ledgerline.transfers.webhooks;

import dev.ledgerline.transfers.hashing.HmacSha256;

import java.security.SecureRandom;
import java.util.Base64;

/**
 * {@code Ledgerline-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">}, keyed with the endpoint's
 * secret as issued (its UTF-8 bytes, {@code whsec_} prefix included). A receiver recomputes it over the raw body and
 * refuses a {@code t} too far from its own clock (docs/webhooks.md).
 */
public final class WebhookSignature {

    public static final String HEADER = "Ledgerline-Signature";
    public static final String EVENT_ID_HEADER = "Ledgerline-Event-Id";
    public static final String SECRET_PREFIX = "whsec_";

    private static final SecureRandom RANDOM = new SecureRandom();

    private WebhookSignature() {
    }

    /** A new secret: {@code whsec_} and 32 random bytes, base64url. */
    public static String newSecret() {
        byte[] bytes = new byte[32];
        RANDOM.nextBytes(bytes);
        return SECRET_PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    public static String header(String secret, long unixSeconds, String body) {
        return header(secret, null, unixSeconds, body);
    }

    /**
     * The header signed with {@code secret} and, while a rotation's overlap lasts, with the {@code previous} one too: a
     * second {@code v1}, so a receiver that still holds the old secret accepts the delivery (it takes any {@code v1}
     * that matches).
     */
    public static String header(String secret, String previous, long unixSeconds, String body) {
        String signed = unixSeconds + "." + body;
        String header = "t=" + unixSeconds + ",v1=" + new HmacSha256(secret).hex(signed);
        return previous == null ? header : header + ",v1=" + new HmacSha256(previous).hex(signed);
    }
}
