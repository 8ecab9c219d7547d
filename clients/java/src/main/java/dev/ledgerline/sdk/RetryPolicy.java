package dev.ledgerline.sdk;

import java.time.Duration;

/**
 * How hard {@link LedgerlineClient} tries for one intent.
 *
 * @param budget         total time for one intent, attempts and waits together; no attempt starts after it
 * @param attemptTimeout one attempt's timeout; a timed-out attempt is retried with the same key
 * @param baseDelay      the first backoff step when the answer has no {@code Retry-After}, doubled per attempt
 * @param maxDelay       the largest backoff step
 */
public record RetryPolicy(Duration budget, Duration attemptTimeout, Duration baseDelay, Duration maxDelay) {

    /** 30 s per intent, 10 s per attempt, backoff from 250 ms up to 8 s. */
    public static final RetryPolicy DEFAULT = new RetryPolicy(Duration.ofSeconds(30), Duration.ofSeconds(10),
            Duration.ofMillis(250), Duration.ofSeconds(8));

    public RetryPolicy {
        if (budget.isNegative() || attemptTimeout.isNegative() || attemptTimeout.isZero() || baseDelay.isNegative()
                || maxDelay.compareTo(baseDelay) < 0) {
            throw new IllegalArgumentException("a retry policy needs a positive attempt timeout and maxDelay >= baseDelay");
        }
    }

    public RetryPolicy withBudget(Duration budget) {
        return new RetryPolicy(budget, attemptTimeout, baseDelay, maxDelay);
    }
}
