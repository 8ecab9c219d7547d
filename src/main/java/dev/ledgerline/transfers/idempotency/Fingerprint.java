package dev.ledgerline.transfers.idempotency;

import dev.ledgerline.transfers.api.TransferRequest;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * SHA-256 over a canonical form of the validated request: fixed field order, normalised values
 * (IBAN without spaces, upper case), each field length-prefixed so no two requests share a form.
 * Field order and whitespace in the client's JSON therefore do not matter.
 */
public final class Fingerprint {

    private Fingerprint() {
    }

    public static String of(TransferRequest request) {
        StringBuilder canonical = new StringBuilder("transfer/v1");
        field(canonical, Long.toString(request.amount()));
        field(canonical, request.currency());
        field(canonical, request.destination().iban());
        field(canonical, request.destination().name());
        field(canonical, request.description() == null ? "\u0000" : request.description());
        return sha256(canonical.toString());
    }

    public static String sha256(String text) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            return HexFormat.of().formatHex(digest.digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }

    private static void field(StringBuilder out, String value) {
        out.append('|').append(value.length()).append(':').append(value);
    }
}
