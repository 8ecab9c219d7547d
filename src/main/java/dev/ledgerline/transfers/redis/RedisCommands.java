package dev.ledgerline.transfers.redis;

import io.quarkus.redis.datasource.ReactiveRedisDataSource;
import io.smallrye.faulttolerance.api.CircuitBreakerName;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.redis.client.Response;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.faulttolerance.CircuitBreaker;
import org.eclipse.microprofile.faulttolerance.Timeout;

/**
 * Every Redis command of the service goes through here, under one short timeout and one breaker:
 * "Redis is down" is a single fact, so the lock and the idempotency fast path learn it together, fail
 * fast while it lasts, and resume together when a trial call succeeds. Callers treat a failed
 * {@code Uni} as "Redis could not answer" and fall back to PostgreSQL.
 */
@ApplicationScoped
public class RedisCommands {

    public static final String BREAKER = "redis";

    /** Deletes the key only if it still holds the given value. EVAL, not EVALSHA: a restarted Redis forgets loaded scripts. */
    public static final String COMPARE_AND_DELETE = """
            if redis.call('GET', KEYS[1]) == ARGV[1] then
              return redis.call('DEL', KEYS[1])
            else
              return 0
            end""";

    /**
     * The value of KEYS[1] if it has one; otherwise sets it to ARGV[1] with a PX ttl of ARGV[2] and
     * answers nil. One round trip for "read the entry, or mark the key": {@code SET … NX GET} does the
     * same but needs Redis 7, and this must work on 6.2 too.
     */
    public static final String GET_OR_SET = """
            local v = redis.call('GET', KEYS[1])
            if v then
              return v
            end
            redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
            return false""";

    private final ReactiveRedisDataSource redis;

    public RedisCommands(ReactiveRedisDataSource redis) {
        this.redis = redis;
    }

    @Timeout(250)
    @CircuitBreaker(requestVolumeThreshold = 8, failureRatio = 0.5, delay = 2000, successThreshold = 1)
    @CircuitBreakerName(BREAKER)
    public Uni<Response> execute(String command, String... args) {
        return redis.execute(command, args);
    }

    /** {@code GET}: the value, or {@code null} when there is none. */
    public Uni<String> get(String key) {
        return execute("GET", key).map(r -> r == null ? null : r.toString());
    }

    /** {@code SET key value NX PX ttl}: {@code true} when this call set it. */
    public Uni<Boolean> setIfAbsent(String key, String value, long ttlMillis) {
        return execute("SET", key, value, "NX", "PX", Long.toString(ttlMillis))
                .map(r -> r != null && "OK".equals(r.toString()));
    }

    /** The key's value when it had one (nothing is written then); {@code null} when this call set it to {@code value}. */
    public Uni<String> getOrSet(String key, String value, long ttlMillis) {
        return execute("EVAL", GET_OR_SET, "1", key, value, Long.toString(ttlMillis)).map(r -> r == null ? null : r.toString());
    }

    /** {@code SET key value XX KEEPTTL}: replaces an existing value, keeps its expiry, never creates the key. */
    public Uni<Void> replace(String key, String value) {
        return execute("SET", key, value, "XX", "KEEPTTL").replaceWithVoid();
    }

    /** {@code SET key value PX ttl}. */
    public Uni<Void> set(String key, String value, long ttlMillis) {
        return execute("SET", key, value, "PX", Long.toString(ttlMillis)).replaceWithVoid();
    }

    /** Compare-and-delete: {@code true} when the key held {@code value} and is now gone; never touches another holder's value. */
    public Uni<Boolean> deleteIfHolds(String key, String value) {
        return execute("EVAL", COMPARE_AND_DELETE, "1", key, value).map(r -> r != null && r.toLong() == 1L);
    }
}
