package dev.ledgerline.transfers.idempotency;

import dev.ledgerline.transfers.config.InstanceId;
import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.transfers.hashing.Sha256;
import dev.ledgerline.transfers.problem.ProblemException;
import dev.ledgerline.transfers.problem.ProblemType;
import dev.ledgerline.transfers.redis.RedisCommands;
import dev.ledgerline.transfers.transfer.NewTransfer;
import dev.ledgerline.transfers.transfer.Transfer;
import dev.ledgerline.transfers.transfer.TransferRepository;
import dev.ledgerline.transfers.transfer.TransferRequest;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.interceptor.Interceptor;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * Accepts a transfer at most once per (principal, Idempotency-Key).
 *
 * <p>PostgreSQL decides: {@code INSERT … ON CONFLICT (user_id, idempotency_key) DO NOTHING} either
 * creates the transfer or finds the original, whose fingerprint says replay or 422. Redis only makes
 * the common cases cheap: a completed entry answers a replay (or a 422) without any PostgreSQL write,
 * and an in-flight marker turns a concurrent duplicate into 409. A marker is never the last word: the
 * duplicate looks the key up in PostgreSQL first, so a marker left behind after the original committed (its
 * completed entry could not be written, or its request died after the commit) answers a replay, not 409. Any
 * Redis failure — down, paused, evicted, flushed — falls back to the database path with no error.
 *
 * <p>A final entry is answered without reading PostgreSQL, so it would outlive a row lost in a database restore
 * for up to the retention. Redis keys therefore carry {@code ledgerline.idempotency.generation}: after a restore,
 * raising it retires every entry at once (README "Idempotency policy").
 */
// built at start-up, before the scheduler starts, rather than lazily on an event loop at first use
@Startup(Interceptor.Priority.PLATFORM_BEFORE - 1)
@ApplicationScoped
public class IdempotencyService {

    private static final Logger LOG = Logger.getLogger(IdempotencyService.class);

    /** Whether the transfer was created by this request or is the original answered again. */
    public record Accepted(Transfer transfer, boolean replayed) {
    }

    /** A Redis read that did not answer. */
    private static final String UNAVAILABLE = "\u0000unavailable";

    /** The decisions counted, as {@code path/result}: the fast path (Redis) and the database path. */
    private static final List<String> DECISIONS = List.of("fast/mismatch", "fast/replay_final", "fast/in_flight",
            "fast/replay", "db/first_use", "db/redis_unavailable", "db/cache_unreadable", "db/mismatch",
            "db/replay_after_marker", "db/cache_stale", "db/replay");

    private final TransferRepository transfers;
    private final RedisCommands cache;
    private final LedgerlineConfig config;
    private final String actor;
    /** Every decision's counter, built once: {@code path/result} → counter. */
    private final Map<String, Counter> decisions;

    public IdempotencyService(TransferRepository transfers, RedisCommands cache, LedgerlineConfig config,
                              InstanceId instance, MeterRegistry metrics) {
        this.transfers = transfers;
        this.cache = cache;
        this.config = config;
        this.actor = instance.value();
        this.decisions = DECISIONS.stream().collect(Collectors.toUnmodifiableMap(d -> d, d -> {
            String[] pathResult = d.split("/");
            return metrics.counter("ledgerline.idempotency", "path", pathResult[0], "result", pathResult[1]);
        }));
    }


    /** Redis key for a (principal, key) in the default generation: hashed, so client input never shapes the key space. */
    static String redisKey(String principal, IdempotencyKey key) {
        return redisKey(1, principal, key);
    }

    static String redisKey(int generation, String principal, IdempotencyKey key) {
        String prefix = generation == 1 ? "idem:v1:" : "idem:v1:g" + generation + ":";
        return prefix + Sha256.hex(principal.length() + ":" + principal + "|" + key.value());
    }

    public Uni<Accepted> accept(String principal, IdempotencyKey key, TransferRequest request) {
        String fingerprint = Fingerprint.of(request);
        String redisKey = redisKey(config.idempotency().generation(), principal, key);
        String marker = IdempotencyEntry.inFlight(markerToken(), fingerprint).encode();
        // one round trip: the key's entry if it has one, else our in-flight marker is set
        return cache.getOrSet(redisKey, marker, config.idempotency().inFlightTtl().toMillis())
                .onFailure().recoverWithItem(UNAVAILABLE)
                .flatMap(value -> {
                    if (value == null) {
                        count("db", "first_use");
                        return insertOrFind(principal, key, request, fingerprint, redisKey, marker);
                    }
                    if (UNAVAILABLE.equals(value)) {
                        count("db", "redis_unavailable");
                        return insertOrFind(principal, key, request, fingerprint, redisKey, null);
                    }
                    IdempotencyEntry entry = IdempotencyEntry.decode(value);
                    if (entry == null) {
                        // not an entry of ours: the database decides, and remember() overwrites it
                        count("db", "cache_unreadable");
                        return insertOrFind(principal, key, request, fingerprint, redisKey, null);
                    }
                    if (!entry.completed()) {
                        return inFlightElsewhere(principal, key, fingerprint, redisKey);
                    }
                    if (!entry.fingerprint().equals(fingerprint)) {
                        count("fast", "mismatch");
                        throw reused();
                    }
                    if (entry.kind() == IdempotencyEntry.Kind.FINAL && entry.last().userId().equals(principal)) {
                        // sent or failed: the row can no longer change, so this copy is the current transfer
                        count("fast", "replay_final");
                        return Uni.createFrom().item(new Accepted(entry.last(), true));
                    }
                    return replayFromDatabase(principal, key, request, fingerprint, redisKey, entry.transferId());
                });
    }

    /**
     * Another request holds the key's marker. If PostgreSQL has no row yet, that request is still on its way:
     * 409. If it has one, the original committed and its completed entry never replaced the marker (Redis
     * failed that write, or the request died after its commit): PostgreSQL answers, and the entry is written now.
     */
    private Uni<Accepted> inFlightElsewhere(String principal, IdempotencyKey key, String fingerprint, String redisKey) {
        return transfers.findByKey(principal, key.value()).flatMap(original -> {
            if (original == null) {
                count("fast", "in_flight");
                throw inUse();
            }
            if (!original.requestFingerprint().equals(fingerprint)) {
                count("db", "mismatch");
                throw reused();
            }
            count("db", "replay_after_marker");
            return remember(redisKey, original).replaceWith(new Accepted(original, true));
        });
    }

    /** A completed entry whose transfer was still moving when it was written: the row has the current state. */
    private Uni<Accepted> replayFromDatabase(String principal, IdempotencyKey key, TransferRequest request, String fingerprint,
                                             String redisKey, UUID transferId) {
        return transfers.findById(transferId).flatMap(original -> {
            if (original == null || !original.userId().equals(principal)) {
                // an entry that the database does not back (e.g. a restored database): let the database decide
                count("db", "cache_stale");
                return insertOrFind(principal, key, request, fingerprint, redisKey, null);
            }
            count("fast", "replay");
            Uni<Void> keepFinal = original.status().isTerminal()
                    ? cache.replace(redisKey, IdempotencyEntry.finalState(original).encode()).onFailure().recoverWithNull()
                    : Uni.createFrom().voidItem();
            return keepFinal.replaceWith(new Accepted(original, true));
        });
    }

    /** The database path: insert, or find the original and compare fingerprints. */
    private Uni<Accepted> insertOrFind(String principal, IdempotencyKey key, TransferRequest request, String fingerprint,
                                       String redisKey, String ourMarker) {
        NewTransfer candidate = new NewTransfer(UUID.randomUUID(), principal, key.value(), fingerprint,
                request.amount(), request.currency(), request.destination().iban(), request.destination().name(),
                request.description(), newProviderReference());
        return transfers.insert(candidate, config.pipeline().pendingGrace(), actor)
                .flatMap(created -> created != null
                        ? Uni.createFrom().item(new Accepted(created, false))
                        : transfers.findByKey(principal, key.value()).map(original -> {
                            if (original == null) {
                                throw new IllegalStateException("conflict on (user_id, idempotency_key) without a row");
                            }
                            return new Accepted(original, true);
                        }))
                .call(accepted -> remember(redisKey, accepted.transfer()))
                .map(accepted -> {
                    if (accepted.replayed() && !accepted.transfer().requestFingerprint().equals(fingerprint)) {
                        count("db", "mismatch");
                        throw reused();
                    }
                    if (accepted.replayed()) {
                        count("db", "replay");
                    }
                    return accepted;
                })
                .onFailure(e -> !(e instanceof ProblemException) && ourMarker != null)
                .call(() -> cache.deleteIfHolds(redisKey, ourMarker).onFailure().recoverWithNull());
    }

    /** The completed entry replaces our marker; if Redis is gone the database still remembers. */
    private Uni<Void> remember(String redisKey, Transfer transfer) {
        String entry = IdempotencyEntry.of(transfer).encode();
        return cache.set(redisKey, entry, config.idempotency().retention().toMillis())
                .onFailure().invoke(e -> LOG.debugf("transferId=%s step=idempotency could not cache the completed key: %s",
                        transfer.id(), e.toString()))
                .onFailure().recoverWithNull();
    }

    /** Names our in-flight marker, so only this request's cleanup deletes it. */
    private static String markerToken() {
        return UUID.randomUUID().toString().replace("-", "");
    }

    private static String newProviderReference() {
        return "ll_" + UUID.randomUUID().toString().replace("-", "");
    }

    private ProblemException inUse() {
        String retryAfter = Integer.toString(config.idempotency().retryAfterSeconds());
        return new ProblemException(ProblemType.IDEMPOTENCY_KEY_IN_USE,
                "The first request with this Idempotency-Key is still being processed; retry after " + retryAfter + " s.",
                null, Map.of("Retry-After", retryAfter));
    }

    private static ProblemException reused() {
        return new ProblemException(ProblemType.IDEMPOTENCY_KEY_REUSED,
                "This Idempotency-Key was already used with a different request body; use a new key for a new transfer.");
    }

    private void count(String path, String result) {
        decisions.get(path + "/" + result).increment();
    }
}
