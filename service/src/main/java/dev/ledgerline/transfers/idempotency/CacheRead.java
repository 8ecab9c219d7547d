package dev.ledgerline.transfers.idempotency;

/**
 * What the one Redis round trip of {@link IdempotencyService#accept} found for a key: a value, nothing (then our
 * in-flight marker is set now), or no answer at all (Redis down, slow or behind its breaker), when PostgreSQL
 * decides alone.
 */
sealed interface CacheRead {

    /** The key held a value: an entry of ours, or something {@link IdempotencyEntry#decode} does not take. */
    record Hit(String value) implements CacheRead {
    }

    /** The key held nothing, and our in-flight marker now holds it. */
    record Miss() implements CacheRead {
    }

    /** Redis did not answer: the key may hold anything, and nothing was set. */
    record Unavailable() implements CacheRead {
    }

    /** The answer of {@code RedisCommands.getOrSet}: its value, or {@code null} when it set ours. */
    static CacheRead of(String value) {
        return value == null ? new Miss() : new Hit(value);
    }
}
