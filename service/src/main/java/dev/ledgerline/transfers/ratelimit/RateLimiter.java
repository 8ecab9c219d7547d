package dev.ledgerline.transfers.ratelimit;

import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.transfers.config.StartupOrder;
import dev.ledgerline.transfers.metrics.Meters;
import dev.ledgerline.transfers.metrics.ServiceMeters;
import dev.ledgerline.transfers.problem.ProblemException;
import dev.ledgerline.transfers.problem.ProblemType;
import dev.ledgerline.transfers.redis.RedisCommands;
import dev.ledgerline.transfers.redis.RedisScript;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.redis.client.Response;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import java.util.EnumMap;
import java.util.Map;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Per-principal token buckets, shared by every instance through Redis: one script per request
 * refills and takes a token atomically, on Redis's own clock (so instances' clocks do not matter).
 * When Redis cannot answer — down, paused, breaker open — the same bucket is kept in this instance's
 * memory instead: the limit then applies per instance, it never becomes "unlimited" and never an
 * error for the client. One exception: a replay that its idempotency entry answers as kept is limited by this
 * instance's bucket of the same rate, so that it costs Redis a plain {@code GET} ({@link #admitAndRead}).
 * {@code TransferService} asks it first for every request, after authentication and
 * authorisation, so the principal is the token's {@code sub} and a caller without a valid token spends nothing.
 */
@Startup(StartupOrder.BEFORE_SCHEDULER)
@Singleton
public class RateLimiter {

    private static final Logger LOG = Logger.getLogger(RateLimiter.class);

    /** What a request spends a token on; each kind is a separate bucket with its own rate. */
    public enum Kind {
        WRITE("w"), READ("r");

        final String tag;

        Kind(String tag) {
            this.tag = tag;
        }
    }

    /**
     * Where a bucket was kept: the {@code store} tag of {@code ledgerline.rate.limit}, in lower case. {@code REPLAY}: a
     * replay its idempotency entry answers as kept, limited by this instance's bucket ({@link #admitAndRead}).
     */
    private enum Store { REDIS, LOCAL, REPLAY }

    /** The two counters of one (kind, store): requests let through and requests refused. */
    private record Admissions(Counter allowed, Counter limited) {
    }

    /**
     * Token bucket. KEYS[1] the bucket; ARGV rate (tokens/s), burst. State: tokens left and the time
     * (µs, Redis's clock) they were counted. Answers {1, 0} when a token was taken, or {0, µs until one
     * is available}. With a KEYS[2] (in the bucket's slot: both carry the principal's hash tag), a taken token also
     * answers that key's value, {1, 0, value} (nil when it has none), so a request is admitted and finds its
     * idempotency entry in one round trip; a refused one reads nothing. With an ARGV[3] too, a key found empty is set
     * to it with a PX ttl of ARGV[4] and the answer is {1, 0, nil, 1}: a first use is admitted and marked in flight in
     * the same round trip.
     */
    static final RedisScript TAKE = RedisScript.of("""
            redis.replicate_commands()
            local rate = tonumber(ARGV[1])
            local burst = tonumber(ARGV[2])
            local t = redis.call('TIME')
            local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
            local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
            local tokens = tonumber(state[1])
            local at = tonumber(state[2])
            if tokens == nil or at == nil then
              tokens = burst
              at = now
            end
            if now > at then
              tokens = math.min(burst, tokens + (now - at) * rate / 1000000)
              at = now
            end
            local allowed = 0
            local wait = 0
            if tokens >= 1 then
              tokens = tokens - 1
              allowed = 1
            else
              wait = math.ceil((1 - tokens) * 1000000 / rate)
            end
            redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(at))
            redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
            if allowed == 1 and KEYS[2] then
              local value = redis.call('GET', KEYS[2])
              if not value and ARGV[3] then
                redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[4])
                return {allowed, wait, false, 1}
              end
              return {allowed, wait, value}
            end
            return {allowed, wait}""");

    private final RedisCommands redis;
    private final LocalBuckets local;
    /** Every admission's counters, built once. */
    private final Map<Kind, Map<Store, Admissions>> admissions = new EnumMap<>(Kind.class);
    private final boolean enabled;
    private final double writeRate;
    private final int writeBurst;
    private final double readRate;
    private final int readBurst;
    /** The script's rate and burst arguments of each kind, written once. */
    private final String writeRateArg;
    private final String writeBurstArg;
    private final String readRateArg;
    private final String readBurstArg;

    public RateLimiter(RedisCommands redis, LedgerlineConfig config, @ServiceMeters MeterRegistry metrics) {
        LedgerlineConfig.RateLimit limits = config.rateLimit();
        this.redis = redis;
        for (Kind kind : Kind.values()) {
            Map<Store, Admissions> byStore = new EnumMap<>(Store.class);
            for (Store store : Store.values()) {
                String kindTag = kind.name().toLowerCase();
                String storeTag = store.name().toLowerCase();
                Counter limited = Meters.RATE_LIMIT.counter(kindTag, storeTag, "limited").register(metrics);
                Counter allowed = Meters.RATE_LIMIT.counter(kindTag, storeTag, "allowed").register(metrics);
                byStore.put(store, new Admissions(allowed, limited));
            }
            admissions.put(kind, byStore);
        }
        this.enabled = limits.enabled();
        this.writeRate = limits.writes().perSecond();
        this.writeBurst = limits.writes().burst();
        this.readRate = limits.reads().perSecond();
        this.readBurst = limits.reads().burst();
        this.writeRateArg = Double.toString(writeRate);
        this.writeBurstArg = Integer.toString(writeBurst);
        this.readRateArg = Double.toString(readRate);
        this.readBurstArg = Integer.toString(readBurst);
        this.local = new LocalBuckets(limits.maxLocalBuckets());
    }

    /** Completes when the principal may go on; fails with a 429 {@code rate-limited} problem otherwise. */
    public Uni<Void> admit(String principal, Kind kind) {
        if (!enabled) {
            return Uni.createFrom().voidItem();
        }
        double rate = kind == Kind.WRITE ? writeRate : readRate;
        int burst = kind == Kind.WRITE ? writeBurst : readBurst;
        return redis.eval(TAKE, 1, redisKey(principal, kind), rateArg(kind), burstArg(kind))
                .map(RateLimiter::waitMicros)
                .invoke(wait -> count(kind, Store.REDIS, wait))
                .onFailure().recoverWithItem(e -> {
                    LOG.debugf("step=rate-limit Redis could not answer, using this instance's bucket: %s", e.toString());
                    return takeHere(principal, kind, Store.LOCAL, rate, burst);
                })
                .map(wait -> {
                    if (wait > 0) {
                        throw limited(wait);
                    }
                    return null;
                });
    }

    /**
     * What {@link #admitAndRead} found: whether Redis answered, and if it did, the value of the key it read
     * ({@code null} when the key holds none); {@code marked}: the mark the script set on the key it found empty, or
     * {@code null}.
     */
    public record Admitted(boolean answered, String value, String marked) {

        Admitted(boolean answered, String value) {
            this(answered, value, null);
        }
    }

    /**
     * What to set a key to when the admission finds it empty ({@link #admitHaving}): an in-flight marker, for
     * {@code ttlMillis}.
     */
    public record Mark(String value, long ttlMillis) {
    }

    /**
     * {@link #admit}, and the value of {@code key}, a key in the principal's slot (it carries
     * {@link RedisCommands#principalTag}). The key is read first, with a plain {@code GET}: a value that {@code keptReplay}
     * accepts (a replay its final entry answers from the response it keeps, with no parse, no write and no send) spends a
     * token of this instance's replay bucket, at the same rate, and is answered; anything else spends a token of the
     * shared bucket, the token-bucket script reading the key again in the same round trip. So a replay costs Redis one
     * {@code GET}, and a new transfer one round trip more than the script alone. A replay's limit is therefore per
     * instance: n instances answer a principal's replays at up to n times the rate, each replay costing one {@code GET}
     * and one primary-key read. When Redis cannot answer, this instance's bucket decides and the value is unknown
     * ({@code answered} false); a 429 of the shared bucket reads nothing. With the limiter disabled, the key is read alone.
     */
    public Uni<Admitted> admitAndRead(String principal, Kind kind, String key, Predicate<String> keptReplay,
                                      Supplier<Mark> markIfEmpty) {
        Uni<Admitted> read = redis.execute("GET", key).map(r -> new Admitted(true, r == null ? null : r.toString()));
        if (!enabled) {
            return read.onFailure().recoverWithItem(new Admitted(false, null));
        }
        return read
                .onFailure().recoverWithItem(e -> {
                    LOG.debugf("step=rate-limit Redis could not answer, using this instance's bucket: %s", e.toString());
                    return null;
                })
                .flatMap(found -> found == null ? admitHere(principal, kind)
                        : admitHaving(principal, kind, key, keptReplay, found.value(), markIfEmpty));
    }

    /**
     * {@link #admitAndRead} for a key whose value a {@code GET} of this request read already ({@code null}: it held
     * none): a token of the replay bucket when {@code keptReplay} accepts it, else of the shared bucket, whose script
     * reads the key again. A key read empty is also set to {@code markIfEmpty}'s mark by the same script if it is still
     * empty then ({@link Admitted#marked}); the supplier may answer {@code null} (nothing to set), and is asked only
     * for a key read empty.
     */
    public Uni<Admitted> admitHaving(String principal, Kind kind, String key, Predicate<String> keptReplay, String value,
                                     Supplier<Mark> markIfEmpty) {
        if (!enabled) {
            return Uni.createFrom().item(new Admitted(true, value));
        }
        double rate = kind == Kind.WRITE ? writeRate : readRate;
        int burst = kind == Kind.WRITE ? writeBurst : readBurst;
        if (value != null && keptReplay.test(value)) {
            return Uni.createFrom().item(admittedOrLimited(
                    new Taken(takeHere(principal, kind, Store.REPLAY, rate, burst), new Admitted(true, value))));
        }
        return takeShared(principal, kind, key, rate, burst, value == null ? markIfEmpty.get() : null)
                .map(RateLimiter::admittedOrLimited);
    }

    /** This instance's bucket alone: Redis could not answer, so nothing was read. */
    private Uni<Admitted> admitHere(String principal, Kind kind) {
        double rate = kind == Kind.WRITE ? writeRate : readRate;
        int burst = kind == Kind.WRITE ? writeBurst : readBurst;
        return Uni.createFrom().item(admittedOrLimited(new Taken(takeHere(principal, kind, Store.LOCAL, rate, burst), new Admitted(false, null))));
    }

    private static Admitted admittedOrLimited(Taken taken) {
        if (taken.waitMicros() > 0) {
            throw limited(taken.waitMicros());
        }
        return taken.admitted();
    }

    /**
     * A token of the shared bucket and, in the same script, the key's value (and the key set to {@code mark} if it is
     * empty, unless {@code mark} is null); this instance's bucket when Redis fails.
     */
    private Uni<Taken> takeShared(String principal, Kind kind, String key, double rate, int burst, Mark mark) {
        String bucket = redisKey(principal, kind);
        String rateArg = rateArg(kind);
        String burstArg = burstArg(kind);
        Uni<Response> script = mark == null
                ? redis.eval(TAKE, 2, bucket, key, rateArg, burstArg)
                : redis.eval(TAKE, 2, bucket, key, rateArg, burstArg, mark.value(), Long.toString(mark.ttlMillis()));
        return script
                .map(r -> {
                    long wait = waitMicros(r);
                    count(kind, Store.REDIS, wait);
                    Response value = r.size() > 2 ? r.get(2) : null;
                    boolean marked = r.size() > 3 && r.get(3) != null && r.get(3).toLong() == 1L;
                    return new Taken(wait, new Admitted(true, value == null ? null : value.toString(), marked ? mark.value() : null));
                })
                .onFailure().recoverWithItem(e -> {
                    LOG.debugf("step=rate-limit Redis could not answer, using this instance's bucket: %s", e.toString());
                    return new Taken(takeHere(principal, kind, Store.LOCAL, rate, burst), new Admitted(false, null));
                });
    }

    private String rateArg(Kind kind) {
        return kind == Kind.WRITE ? writeRateArg : readRateArg;
    }

    private String burstArg(Kind kind) {
        return kind == Kind.WRITE ? writeBurstArg : readBurstArg;
    }

    /** A bucket's answer: µs until a token (0: one was taken), and what was read with it. */
    private record Taken(long waitMicros, Admitted admitted) {
    }

    /**
     * Redis key of a principal's bucket: {@code rl:v1:<kind>:} and the principal's hash tag (hashed, so client input
     * never shapes the key space), so the bucket shares a slot with the principal's idempotency entries.
     */
    public static String redisKey(String principal, Kind kind) {
        return "rl:v1:" + kind.tag + ":" + RedisCommands.principalTag(principal);
    }

    /**
     * A token of this instance's bucket, counted under {@code store}: {@code LOCAL}, the fallback while Redis cannot
     * answer, or {@code REPLAY}, the replays answered as kept; 0 when taken, else the µs until one is available.
     */
    private long takeHere(String principal, Kind kind, Store store, double rate, int burst) {
        String bucket = (store == Store.REPLAY ? "replay:" : "") + kind.tag + ":" + principal;
        long wait = local.take(bucket, rate, burst, System.nanoTime());
        count(kind, store, wait);
        return wait;
    }

    private static long waitMicros(Response r) {
        if (r == null || r.size() < 2) {
            throw new IllegalStateException("unexpected answer from the rate-limit script: " + r);
        }
        return r.get(0).toLong() == 1L ? 0L : Math.max(1L, r.get(1).toLong());
    }

    private static ProblemException limited(long waitMicros) {
        long seconds = Math.max(1L, (waitMicros + 999_999L) / 1_000_000L);
        String retryAfter = Long.toString(seconds);
        return new ProblemException(ProblemType.RATE_LIMITED,
                "Too many requests for this principal; retry after " + retryAfter + " s.",
                null, Map.of("Retry-After", retryAfter));
    }

    private void count(Kind kind, Store store, long wait) {
        Admissions counters = admissions.get(kind).get(store);
        (wait > 0 ? counters.limited() : counters.allowed()).increment();
    }
}
