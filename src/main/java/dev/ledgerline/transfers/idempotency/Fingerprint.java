package dev.ledgerline.transfers.idempotency;

import dev.ledgerline.transfers.hashing.Sha256;
import dev.ledgerline.transfers.transfer.TransferRequest;

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
        return Sha256.hex(canonical.toString());
    }

    private static void field(StringBuilder out, String value) {
        out.append('|').append(value.length()).append(':').append(value);
    }
}
