package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.idempotency.IdempotencyKey;
import dev.ledgerline.transfers.problem.ProblemException;
import dev.ledgerline.transfers.problem.ProblemType;
import dev.ledgerline.transfers.service.TransferService.Submission;
import io.vertx.core.http.HttpServerRequest;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.core.MediaType;

/** Reads a {@code POST /v1/transfers} into its Idempotency-Key and its validated body, or a 400/413/415 problem. */
@ApplicationScoped
public class Submissions {

    private final TransferRequestParser parser;

    public Submissions(TransferRequestParser parser) {
        this.parser = parser;
    }

    Submission read(HttpServerRequest http, String idempotencyKey, byte[] body) {
        IdempotencyKey key = IdempotencyKey.parse(single(http, "Idempotency-Key", idempotencyKey));
        return new Submission(key, parser.parse(body, charset(http)));
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
