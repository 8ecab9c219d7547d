package dev.ledgerline.transfers.redis;

import dev.ledgerline.transfers.config.Breaker;
import dev.ledgerline.transfers.config.Deadlines;
import dev.ledgerline.transfers.config.Deadlines.Deadline;
import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.transfers.config.StartupOrder;
import dev.ledgerline.transfers.hashing.Sha256;
import dev.ledgerline.transfers.metrics.Meters;
import dev.ledgerline.transfers.metrics.ServiceMeters;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.arc.ClientProxy;
import io.quarkus.redis.datasource.ReactiveRedisDataSource;
import io.quarkus.runtime.Startup;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.mutiny.redis.client.Response;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Request;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Singleton;

import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * Every Redis command of the service goes through here, under one short timeout and one breaker:
 * "Redis is down" is a single fact, so the lock, the rate limiter and the idempotency fast path learn it
 * together, fail fast while it lasts, and resume together when a trial call succeeds. Callers treat a
 * failed {@code Uni} as "Redis could not answer" and fall back to PostgreSQL (or to local buckets).
 *
 * <p>The timeout is a {@link Deadlines} deadline, which expires on the caller's event loop up to a tenth of it late,
 * and the breaker is {@link Breaker}: the rules of SmallRye Fault Tolerance's {@code @Timeout} and
 * {@code @CircuitBreaker} (by default 250 ms;
 * 8 calls, 50 %, 2 s, one successful trial; {@code ledgerline.redis.*}), at a fraction of their per-call cost
 * (bench/FT-AB.md) — and a timeout while Redis keeps answering other commands is this process
 * being late (CPU saturated), not Redis failing, and does not count.
 *
 * <p>A command sent from an event loop goes out on that loop's own connection, pipelined with the loop's other
 * commands ({@link Pipes}); one from a worker thread, or while the loop's connection is being replaced, on a pooled one.
 */
@Startup(StartupOrder.BEFORE_SCHEDULER)
@Singleton
public class RedisCommands {


    /** Deletes the key only if it still holds the given value. */
    public static final RedisScript COMPARE_AND_DELETE = RedisScript.of("""
            if redis.call('GET', KEYS[1]) == ARGV[1] then
              return redis.call('DEL', KEYS[1])
            else
              return 0
            end""");

    /**
     * The value of KEYS[1] if it has one; otherwise sets it to ARGV[1] with a PX ttl of ARGV[2] and
     * answers nil. One round trip for "read the entry, or mark the key": {@code SET … NX GET} does the
     * same but needs Redis 7, and this must work on 6.2 too.
     */
    public static final RedisScript GET_OR_SET = RedisScript.of("""
            local v = redis.call('GET', KEYS[1])
            if v then
              return v
            end
            redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
            return false""");

    /**
     * The tags of recent principals: every request of a principal derives its bucket's and its entry's names from the
     * tag, a SHA-256 digest each time otherwise.
     */
    private static final Map<String, String> TAGS = new ConcurrentHashMap<>();
    private static final int TAGS_KEPT = 8192;

    /**
     * The hash tag of a principal's keys, {@code {<32 hex digits>}}: every key that one operation touches together (the
     * principal's rate-limit bucket and one of its idempotency entries) carries it, so on Redis Cluster they live in
     * one slot and a two-key script never meets {@code CROSSSLOT}. Hashed, so client input never shapes the key space.
     */
    public static String principalTag(String principal) {
        String tag = TAGS.get(principal);
        if (tag == null) {
            tag = "{" + Sha256.hex(principal.length() + ":" + principal).substring(0, 32) + "}";
            if (TAGS.size() >= TAGS_KEPT) {
                TAGS.clear(); // a bound, not an eviction policy: the tags of the principals active now come back at once
            }
            TAGS.put(principal, tag);
        }
        return tag;
    }

    private final Pipes redis;
    private final long timeoutMs;
    /** Every command's timeout: one length, so one periodic check instead of a timer per command. */
    private final Deadlines timeouts;
    private final Breaker breaker;
    private final Counter answered;
    private final Counter failed;
    private final Counter timedOut;
    private final Counter late;
    private final Counter refused;
    private final Counter scriptsLoaded;

    public RedisCommands(ReactiveRedisDataSource redis, Pipes.Options options, Vertx vertx, @ServiceMeters MeterRegistry metrics,
            LedgerlineConfig config) {
        // an @ApplicationScoped bean behind a client proxy, which would look the application context up on every
        // command; it lives as long as the application does
        // unwrapped first: creating the client is what hands its options to Pipes.Options
        io.vertx.redis.client.Redis client = ClientProxy.unwrap(redis).getRedis().getDelegate();
        this.redis = new Pipes(client, vertx, config.redis().pipelined() ? options.get() : null);
        LedgerlineConfig.Redis settings = config.redis();
        this.timeoutMs = settings.timeout().toMillis();
        this.timeouts = new Deadlines(vertx, settings.timeout());
        this.breaker = new Breaker(settings.breaker().requestVolume(), settings.breaker().failureRatio(),
                settings.breaker().delay().toNanos());
        this.answered = commands(metrics, "answered");
        this.failed = commands(metrics, "failed");
        this.timedOut = commands(metrics, "timed_out");
        // timed out while Redis kept answering other commands: this process was late, not Redis
        this.late = commands(metrics, "late");
        this.refused = commands(metrics, "breaker_open");
        // answered NOSCRIPT and sent again as text: this Redis had not run the script (restarted, failed over, flushed)
        this.scriptsLoaded = commands(metrics, "script_sent");
        Meters.REDIS_BREAKER_OPEN.gauge(metrics, breaker, b -> b.state() == Breaker.State.CLOSED ? 0 : 1);
    }

    private static Counter commands(MeterRegistry metrics, String result) {
        return Meters.REDIS_COMMANDS.counter(result).register(metrics);
    }

    /** Sends one command: fails at once while the breaker is open, and after the timeout without an answer. */
    public Uni<Response> execute(String command, String... args) {
        Request request = request(command(command), args);
        return guarded(command, () -> redis.send(request).map(Response::newInstance));
    }

    /**
     * The client's command for a name: the ones the service sends by their constants, any other by the client's
     * look-up, which lower-cases the name and searches its table of every command (1.4 % of a replay's samples while
     * every command went through it: bench/CPU-AB.md, "Strings built once, no socket byte summaries").
     */
    static Command command(String name) {
        return switch (name) {
            case "GET" -> Command.GET;
            case "SET" -> Command.SET;
            case "SADD" -> Command.SADD;
            case "SREM" -> Command.SREM;
            case "SRANDMEMBER" -> Command.SRANDMEMBER;
            case "PING" -> Command.PING;
            default -> Command.create(name);
        };
    }

    /**
     * Runs {@code script} with its first {@code keys} of {@code keysAndArgs} as KEYS and the rest as ARGV: {@code EVALSHA}
     * with the digest, so the text crosses the wire and is hashed by Redis only on a Redis that has not run it yet
     * ({@code NOSCRIPT}: restarted, failed over, flushed), and then once, by {@code EVAL} in the same guarded call.
     */
    public Uni<Response> eval(RedisScript script, int keys, String... keysAndArgs) {
        String[] args = new String[keysAndArgs.length + 2];
        args[0] = script.sha1();
        args[1] = Integer.toString(keys);
        System.arraycopy(keysAndArgs, 0, args, 2, keysAndArgs.length);
        return guarded("a script", () -> redis.send(request(Command.EVALSHA, args)).recover(error -> {
            if (!notLoaded(error)) {
                return Future.failedFuture(error);
            }
            scriptsLoaded.increment();
            String[] withText = args.clone();
            withText[0] = script.text();
            return redis.send(request(Command.EVAL, withText));
        }).map(Response::newInstance));
    }

    /**
     * The client's request of {@code command} with {@code args}: built from an array, its list is sized once, where
     * adding the arguments one by one grew it for every script with more than ten. The client writes each argument's
     * bytes back into the array it is given, so it gets a copy of its own.
     */
    private static Request request(Command command, String[] args) {
        return Request.cmd(command, Arrays.copyOf(args, args.length, Object[].class));
    }

    /** Redis's answer to {@code EVALSHA} of a script it does not hold: nothing ran. */
    static boolean notLoaded(Throwable error) {
        String message = error.getMessage();
        return message != null && message.startsWith("NOSCRIPT");
    }

    /** {@code call} under the timeout and the breaker; {@code what} names it in the timeout's message. */
    <T> Uni<T> guarded(String what, Supplier<Future<T>> call) {
        if (!breaker.allow(System.nanoTime())) {
            refused.increment();
            return Uni.createFrom().failure(new RedisUnavailableException("the Redis breaker is open"));
        }
        return Uni.createFrom().emitter(emitter -> {
            AtomicBoolean settled = new AtomicBoolean();
            long sentAt = System.nanoTime();
            Deadline deadline = timeouts.arm(() -> {
                if (settled.compareAndSet(false, true)) {
                    // counted against Redis only if Redis answered nothing meanwhile (see Breaker#timedOut)
                    if (breaker.timedOut(sentAt, System.nanoTime())) {
                        timedOut.increment();
                        redis.dropHere(); // unanswered while Redis answered nothing: this loop's connection may be dead
                    } else {
                        late.increment();
                    }
                    emitter.fail(new TimeoutException("Redis did not answer " + what + " within " + timeoutMs + " ms"));
                }
            });
            emitter.onTermination(() -> {
                // cancelled by the caller: no verdict on Redis, but a trial call must not leave the breaker half-open
                if (settled.compareAndSet(false, true)) {
                    deadline.settle();
                    breaker.abandoned(System.nanoTime());
                }
            });
            call.get().onComplete(result -> {
                if (!settled.compareAndSet(false, true)) {
                    return;
                }
                deadline.settle();
                if (result.succeeded()) {
                    answered.increment();
                    breaker.succeeded(System.nanoTime());
                    emitter.complete(result.result());
                } else {
                    failed.increment();
                    breaker.failed(System.nanoTime());
                    emitter.fail(result.cause());
                }
            });
        });
    }

    @PreDestroy
    void stop() {
        timeouts.close();
        redis.close();
    }

    /** Closes the breaker with an empty window (tests that heal Redis, so the next test starts from a known state). */
    public void resetBreaker() {
        breaker.reset();
    }

    /** Whether the calling event loop holds its pipelined connection now. */
    boolean pipelinedHere() {
        return redis.heldHere();
    }

    /** Whether the breaker currently lets commands through. */
    public boolean breakerClosed() {
        return breaker.state() == Breaker.State.CLOSED;
    }

    /** The breaker refused the command without sending it. */
    public static final class RedisUnavailableException extends RuntimeException {
        RedisUnavailableException(String message) {
            super(message, null, false, false);
        }
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
        return eval(GET_OR_SET, 1, key, value, Long.toString(ttlMillis)).map(r -> r == null ? null : r.toString());
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
        return eval(COMPARE_AND_DELETE, 1, key, value).map(r -> r != null && r.toLong() == 1L);
    }
}
