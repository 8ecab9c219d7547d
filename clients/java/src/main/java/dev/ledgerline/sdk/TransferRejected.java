package dev.ledgerline.sdk;

/**
 * The service answered with a status that sending again cannot change (400, 401, 403, 422, ...): fix the
 * request or the token. The body is the RFC 9457 problem document the service sent.
 */
public class TransferRejected extends RuntimeException {

    private final int status;
    private final String problem;
    private final String idempotencyKey;

    public TransferRejected(int status, String problem, String idempotencyKey) {
        super("the service answered " + status + (problem == null || problem.isBlank() ? "" : ": " + problem));
        this.status = status;
        this.problem = problem;
        this.idempotencyKey = idempotencyKey;
    }

    public int status() {
        return status;
    }

    /** The problem document as sent ({@code application/problem+json}), or null. */
    public String problem() {
        return problem;
    }

    public String idempotencyKey() {
        return idempotencyKey;
    }
}
