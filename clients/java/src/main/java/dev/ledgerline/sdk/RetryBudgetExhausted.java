package dev.ledgerline.sdk;

/**
 * The budget ran out before an attempt succeeded. The intent may or may not exist at the service: retry
 * it later with {@link #idempotencyKey()}, never with a new key.
 */
public class RetryBudgetExhausted extends RuntimeException {

    private final int attempts;
    private final String idempotencyKey;
    private final int lastStatus;

    public RetryBudgetExhausted(int attempts, String idempotencyKey, int lastStatus, Throwable lastFailure) {
        super("gave up after " + attempts + " attempt(s)" + (lastStatus > 0 ? ", the last answered " + lastStatus : "")
                + ": retry later with the same key", lastFailure);
        this.attempts = attempts;
        this.idempotencyKey = idempotencyKey;
        this.lastStatus = lastStatus;
    }

    public int attempts() {
        return attempts;
    }

    public String idempotencyKey() {
        return idempotencyKey;
    }

    /** The last status received, or 0 when the last attempt got none (network error, timeout). */
    public int lastStatus() {
        return lastStatus;
    }
}
