package dev.ledgerline.transfers.problem;

/** Every problem {@code type} the service answers with; openapi.yaml lists the same set. */
public enum ProblemType {
    MALFORMED_REQUEST(400, "Malformed request"),
    VALIDATION_FAILED(400, "The request is not valid"),
    IDEMPOTENCY_KEY_MISSING(400, "Idempotency-Key header is missing"),
    IDEMPOTENCY_KEY_INVALID(400, "Idempotency-Key header is not valid"),
    INVALID_PREFERENCE(400, "Prefer header is not valid"),
    UNAUTHORIZED(401, "Authentication required"),
    FORBIDDEN(403, "Not allowed"),
    NOT_FOUND(404, "Not found"),
    METHOD_NOT_ALLOWED(405, "Method not allowed"),
    NOT_ACCEPTABLE(406, "Not acceptable"),
    IDEMPOTENCY_KEY_IN_USE(409, "A request with this Idempotency-Key is still in progress"),
    TRANSFER_NOT_CANCELLABLE(409, "The transfer can no longer be cancelled"),
    CURSOR_EXPIRED(410, "The cursor is older than the feed keeps"),
    PAYLOAD_TOO_LARGE(413, "Request body too large"),
    UNSUPPORTED_MEDIA_TYPE(415, "Unsupported media type"),
    IDEMPOTENCY_KEY_REUSED(422, "Idempotency-Key was already used for a different request"),
    INSUFFICIENT_FUNDS(422, "The available balance does not cover the amount"),
    RATE_LIMITED(429, "Too many requests"),
    INTERNAL_ERROR(500, "Internal error"),
    SERVICE_UNAVAILABLE(503, "Service temporarily unavailable");

    public static final String BASE = "https://ledgerline.dev/problems/";

    private final int status;
    private final String title;

    ProblemType(int status, String title) {
        this.status = status;
        this.title = title;
    }

    public int status() {
        return status;
    }

    public String title() {
        return title;
    }

    public String uri() {
        return BASE + name().toLowerCase().replace('_', '-');
    }
}
