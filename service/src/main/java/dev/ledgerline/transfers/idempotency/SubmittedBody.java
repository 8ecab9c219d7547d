package dev.ledgerline.transfers.idempotency;

import dev.ledgerline.transfers.transfer.TransferRequest;

import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;

/**
 * The body of a {@code POST /v1/transfers} as it arrived, and the validated request it stands for, parsed at most once
 * and only when a decision needs it: a replay whose body is byte for byte the one its final entry keeps is that
 * request without the parse and the canonical fingerprint ({@link IdempotencyEntry#keeps}). Used on one event loop.
 */
public final class SubmittedBody {

    private final byte[] bytes;
    private final Supplier<TransferRequest> parse;
    private TransferRequest request;
    private String fingerprint;

    /**
     * {@code bytes}: the body as sent, {@code null} when bytes alone cannot stand for the request (a declared charset
     * other than UTF-8: the parse answers those); {@code parse}: the validating parse, which throws the 400/413/415
     * problem of a body that is not a valid request.
     */
    public SubmittedBody(byte[] bytes, Supplier<TransferRequest> parse) {
        this.bytes = bytes;
        this.parse = parse;
    }

    /** The validated request; the first call parses (and may throw the parser's problem). */
    public TransferRequest request() {
        if (request == null) {
            request = parse.get();
        }
        return request;
    }

    /** The request's canonical fingerprint ({@link Fingerprint#of}), computed once. */
    String fingerprint() {
        if (fingerprint == null) {
            fingerprint = Fingerprint.of(request());
        }
        return fingerprint;
    }

    /** The bytes as sent, or {@code null}. */
    byte[] bytes() {
        return bytes;
    }

    /** The body as text, for an entry to keep: {@code null} when the bytes cannot stand for the request. */
    String text() {
        return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
    }
}
