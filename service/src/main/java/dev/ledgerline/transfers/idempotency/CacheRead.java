package dev.ledgerline.transfers.idempotency;

/**
 * What Redis said about a key for {@link IdempotencyService#accept}: a value, nothing (then our in-flight marker is set
 * now, or was set by the admission's script), nothing yet (read without setting anything: the admission's round
 * trip), or no answer at all (Redis down, slow or behind its breaker), when PostgreSQL decides alone.
 */
public sealed interface CacheRead {

    /** The key held a value: an entry of ours, or something {@link IdempotencyEntry#decode} does not take. */
    record Hit(String value) implements CacheRead {
    }

    /** The key held nothing, and our in-flight marker now holds it. */
    record Miss() implements CacheRead {
    }

    /** Redis did not answer: the key may hold anything, and nothing was set. */
    record Unavailable() implements CacheRead {
    }

    /** The key held nothing, and the admission's round trip set it to our in-flight marker {@code marker}. */
    record Marked(String marker) implements CacheRead {
    }

    /** The key held nothing when it was read, and nothing was set: the in-flight marker is still to be placed. */
    record Absent() implements CacheRead {
    }

    /** What a read that sets nothing found: a value, or {@link Absent}. */
    static CacheRead read(String value) {
        return value == null ? new Absent() : new Hit(value);
    }

    /** A read that set nothing: {@code answered} false when Redis did not answer, else its value or {@code null}. */
    public static CacheRead read(boolean answered, String value) {
        return answered ? read(value) : new Unavailable();
    }

    /**
     * What the admission's round trip did: {@code marked}, the marker it set on the key it found empty, or {@code null}
     * and then {@link #read(boolean, String)}.
     */
    public static CacheRead admitted(boolean answered, String value, String marked) {
        return marked != null ? new Marked(marked) : read(answered, value);
    }

    /** The answer of {@code RedisCommands.getOrSet}: its value, or {@code null} when it set ours. */
    static CacheRead of(String value) {
        return value == null ? new Miss() : new Hit(value);
    }
}
