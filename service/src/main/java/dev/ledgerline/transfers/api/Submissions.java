package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.idempotency.IdempotencyKey;
import dev.ledgerline.transfers.problem.ProblemException;
import dev.ledgerline.transfers.problem.ProblemType;
import dev.ledgerline.transfers.idempotency.SubmittedBody;
import io.vertx.core.http.HttpServerRequest;
import jakarta.inject.Singleton;
import jakarta.ws.rs.core.MediaType;

/**
 * Reads a {@code POST /v1/transfers}: its Idempotency-Key (or a 400 problem), and its body as sent with the validating
 * parse that makes it a request when a decision needs one (a 400/413/415 problem then).
 */
@Singleton
public class Submissions {

    private final TransferRequestParser parser;

    public Submissions(TransferRequestParser parser) {
        this.parser = parser;
    }

    IdempotencyKey key(HttpServerRequest http, String idempotencyKey) {
        return IdempotencyKey.parse(single(http, "Idempotency-Key", idempotencyKey));
    }

    /**
     * The body, whose bytes stand for the request only when they are read as UTF-8 (no charset, or {@code utf-8}): under
     * another charset the same bytes are another text, and the parse answers 415.
     */
    SubmittedBody body(HttpServerRequest http, byte[] body) {
        String charset = charset(http);
        boolean utf8 = charset == null || charset.strip().replace("\"", "").equalsIgnoreCase("utf-8");
        return new SubmittedBody(utf8 ? body : null, () -> parser.parse(body, charset));
    }

    /** {@link #body} of a request whose Content-Type declares no charset or UTF-8. */
    SubmittedBody utf8Body(byte[] body) {
        return new SubmittedBody(body, () -> parser.parse(body, null));
    }

    /** The body's declared charset, or null; the route's @Consumes already matched this Content-Type, so it parses. */
    static String charset(HttpServerRequest http) {
        String contentType = http.getHeader("Content-Type");
        return contentType == null ? null : MediaType.valueOf(contentType).getParameters().get("charset");
    }

    /**
     * The one value of a header that must not repeat: a second {@code Idempotency-Key} would otherwise be
     * dropped silently, and the client could not know which of its two keys guards the transfer.
     */
    static String single(HttpServerRequest http, String name, String first) {
        int count = http.headers().getAll(name).size();
        if (count > 1) {
            throw new ProblemException(ProblemType.IDEMPOTENCY_KEY_INVALID,
                    "Send exactly one " + name + " header; this request has " + count + ".");
        }
        return first;
    }
}
