package dev.ledgerline.transfers.idempotency;

import dev.ledgerline.transfers.config.InstanceId;
import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.transfers.config.StartupOrder;
import dev.ledgerline.transfers.hashing.HmacSha256;
import dev.ledgerline.transfers.hashing.Sha256;
import dev.ledgerline.transfers.metrics.Meters;
import dev.ledgerline.transfers.metrics.ServiceMeters;
import dev.ledgerline.transfers.problem.Problem;
import dev.ledgerline.transfers.problem.ProblemException;
import dev.ledgerline.transfers.problem.ProblemType;
import dev.ledgerline.transfers.redis.RedisCommands;
import dev.ledgerline.transfers.transfer.Claim;
import dev.ledgerline.transfers.transfer.FirstClaim;
import dev.ledgerline.transfers.transfer.NewTransfer;
import dev.ledgerline.transfers.transfer.Transfer;
import dev.ledgerline.transfers.transfer.TransferRepository;
import dev.ledgerline.transfers.transfer.TransferRequest;
import dev.ledgerline.transfers.transfer.TransferStatus;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import io.smallrye.mutiny.Uni;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import java.security.SecureRandom;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.EnumMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Accepts a transfer at most once per (principal, Idempotency-Key).
 *
 * <p>PostgreSQL decides: {@code INSERT … ON CONFLICT DO NOTHING} on the key table's {@code (user_id, idempotency_key)} either
 * creates the transfer or finds the original, whose fingerprint says replay or 422. Redis only makes
 * the common cases cheap: a completed entry answers a replay (or a 422) without any PostgreSQL write,
 * and an in-flight marker turns a concurrent duplicate into 409. A marker is never the last word: the
 * duplicate looks the key up in PostgreSQL first, so a marker left behind after the original committed (its
 * completed entry could not be written, or its request died after the commit) answers a replay, not 409. Any
 * Redis failure — down, paused, evicted, flushed — falls back to the database path with no error.
 *
 * <p>The database may forget commits it acknowledged (a failover to an asynchronous replica, a crash, a restore).
 * Two rules keep one intent one payment through that: the provider reference is derived from the intent (an HMAC
 * over the principal, the key and the transfer's id, {@link #providerReference}), so a row created again for the same
 * intent, which the entry names with its id, carries
 * the reference the provider already knows; and an entry whose row the database lost re-creates that row with the
 * same id in {@code reconciling}, whose first step is a provider lookup ({@link #recreate}) — never a fresh send.
 * A final entry answers the replay, whatever the database forgot: it is what the provider did; one primary-key read
 * checks the row is still there and restores it in that final state if it is not ({@link FinalRows}).
 */
@Startup(StartupOrder.BEFORE_SCHEDULER)
@Singleton
public class IdempotencyService {

    private static final Logger LOG = Logger.getLogger(IdempotencyService.class);
    /** The random half of every marker token of this process ({@link #markerToken}). */
    private static final String MARKER_PREFIX = HexFormat.of().toHexDigits(new SecureRandom().nextLong());
    private static final AtomicLong MARKERS = new AtomicLong();

    /**
     * Whether the transfer was created by this request or is the original answered again; {@code response}: the
     * response body kept for it ({@link ResponseBodies#of}), or {@code null} when it is to be written.
     */
    public record Accepted(Transfer transfer, boolean replayed, String response, Claim claim) {

        Accepted(Transfer transfer, boolean replayed, String response) {
            this(transfer, replayed, response, null);
        }
    }

    /** The decisions counted: the {@code path} (fast: Redis, db: PostgreSQL) and {@code result} tags of each. */
    enum Decision {
        FAST_MISMATCH("fast", "mismatch"),
        FAST_REPLAY_FINAL("fast", "replay_final"),
        FAST_IN_FLIGHT("fast", "in_flight"),
        FAST_REPLAY("fast", "replay"),
        DB_FIRST_USE("db", "first_use"),
        DB_REDIS_UNAVAILABLE("db", "redis_unavailable"),
        DB_CACHE_UNREADABLE("db", "cache_unreadable"),
        DB_MISMATCH("db", "mismatch"),
        DB_REPLAY_AFTER_MARKER("db", "replay_after_marker"),
        DB_RECREATED("db", "recreated"),
        /** Counted besides redis_unavailable or cache_unreadable: of those, a new row that starts with a lookup. */
        DB_LOOKUP_FIRST("db", "lookup_first"),
        DB_REPLAY("db", "replay");

        final String path;
        final String result;

        Decision(String path, String result) {
            this.path = path;
            this.result = result;
        }
    }

    private final TransferRepository transfers;
    private final RedisCommands cache;
    private final LedgerlineConfig config;
    private final String actor;
    /** Every decision's counter, built once. */
    private final Map<Decision, Counter> decisions = new EnumMap<>(Decision.class);
    private final HmacSha256 references;
    private final FinalRows finalRows;
    private final ResponseBodies bodies;
    /** A final entry decoded before, with the text it was decoded from. */
    private record Decoded(String text, IdempotencyEntry entry) {
    }

    /** Final entries decoded before, by the Redis key they were read from; at most {@link #maxDecoded}. */
    private final Map<String, Decoded> finalEntries = new java.util.concurrent.ConcurrentHashMap<>();
    private final int maxDecoded;

    public IdempotencyService(TransferRepository transfers, RedisCommands cache, LedgerlineConfig config,
                              InstanceId instance, @ServiceMeters MeterRegistry metrics, FinalRows finalRows, ResponseBodies bodies) {
        this.bodies = bodies;
        this.maxDecoded = config.idempotency().decodedFinalEntries();
        this.transfers = transfers;
        this.cache = cache;
        this.config = config;
        this.actor = instance.value();
        this.references = new HmacSha256(config.idempotency().referenceSecret());
        this.finalRows = finalRows;
        for (Decision decision : Decision.values()) {
            decisions.put(decision, Meters.IDEMPOTENCY.counter(decision.path, decision.result).register(metrics));
        }
    }


    /** Redis key for a (principal, key) in the default generation: hashed, so client input never shapes the key space. */
    public static String redisKey(String principal, IdempotencyKey key) {
        return redisKey(1, principal, key);
    }

    /**
     * {@code idem:v2:[g<generation>:]{<principal's hash tag>}:<sha256>}: in the slot of the principal's rate-limit
     * bucket ({@link RedisCommands#principalTag}), so the admission reads the entry in the same script.
     */
    static String redisKey(int generation, String principal, IdempotencyKey key) {
        String prefix = generation == 1 ? "idem:v2:" : "idem:v2:g" + generation + ":";
        return prefix + RedisCommands.principalTag(principal) + ":" + Sha256.hex(principal.length() + ":" + principal + "|" + key.value());
    }

    /** The key's Redis entry name in this deployment's generation. */
    public String entryKey(String principal, IdempotencyKey key) {
        return redisKey(config.idempotency().generation(), principal, key);
    }

    /**
     * Accepts the POST, given what the admission's round trip read under {@code redisKey}, the key's
     * {@link #entryKey} as the caller computed it once ({@link CacheRead#admitted}). A key with nothing yet is marked in
     * flight by that round trip, or else by one more ({@code getOrSet}); a final entry that keeps exactly this body
     * answers without parsing it, from the response it keeps. A transfer inserted to be sent now asks
     * {@code firstClaim} right before its INSERT whether that statement should also claim it, and for whom
     * ({@code null}: inserted pending); the claim taken is {@link Accepted#claim}.
     */
    public Uni<Accepted> accept(String principal, IdempotencyKey key, String redisKey, SubmittedBody body, CacheRead looked,
                                Supplier<FirstClaim> firstClaim) {
        if (looked instanceof CacheRead.Marked marked) {
            // the admission's script found the key empty and set our marker: as getOrSet below would have
            return decide(principal, key, body, redisKey, new CacheRead.Miss(), marked.marker(), firstClaim);
        }
        if (!(looked instanceof CacheRead.Absent)) {
            return decide(principal, key, body, redisKey, looked, null, firstClaim);
        }
        String marker = newMarker(body);
        // one round trip: the key's entry if one arrived since it was read, else our in-flight marker is set
        return cache.getOrSet(redisKey, marker, config.idempotency().inFlightTtl().toMillis())
                .map(CacheRead::of)
                .onFailure().recoverWithItem(new CacheRead.Unavailable())
                .flatMap(read -> decide(principal, key, body, redisKey, read, marker, firstClaim));
    }

    /**
     * A new in-flight marker for {@code body}, for the admission to set on a key it finds empty
     * ({@link CacheRead#admitted}), or {@code null} when the body is not a valid request (its problem is answered after
     * the admission, as it would be without a marker).
     */
    public String markerFor(SubmittedBody body) {
        try {
            return newMarker(body);
        } catch (ProblemException notARequest) {
            return null;
        }
    }

    /** How long an in-flight marker lives, in milliseconds. */
    public long markerTtlMillis() {
        return config.idempotency().inFlightTtl().toMillis();
    }

    private static String newMarker(SubmittedBody body) {
        return IdempotencyEntry.inFlight(markerToken(), body.fingerprint()).encode();
    }

    /**
     * The entry named {@code entryKey} ({@link #entryKey}) as one {@code GET} reads it now ({@code null}: none); fails
     * when Redis cannot answer.
     */
    public Uni<String> read(String entryKey) {
        return cache.execute("GET", entryKey).map(r -> r == null ? null : r.toString());
    }

    /**
     * Whether an entry's text answers {@code body} as it is kept: a final entry of {@code principal}'s that keeps exactly
     * these bytes under this build's stamp ({@link IdempotencyEntry#keeps}), which {@link #accept} answers from the
     * response it keeps, with no write and no send. The rate limit spends this instance's replay bucket on such a
     * request rather than the shared one ({@code RateLimiter#admitAndRead}).
     */
    public boolean answersAsKept(String principal, SubmittedBody body, String entryKey, String value) {
        IdempotencyEntry entry = decoded(entryKey, value);
        return entry != null && entry.completed() && entry.kind() == IdempotencyEntry.Kind.FINAL
                && entry.last().userId().equals(principal) && entry.keeps(body.bytes(), bodies.stamp());
    }

    private Uni<Accepted> decide(String principal, IdempotencyKey key, SubmittedBody body, String redisKey, CacheRead read,
                                 String marker, Supplier<FirstClaim> firstClaim) {
        if (read instanceof CacheRead.Miss) {
            count(Decision.DB_FIRST_USE);
            return insertOrFind(principal, key, body, redisKey, marker, false, firstClaim);
        }
        if (read instanceof CacheRead.Unavailable) {
            count(Decision.DB_REDIS_UNAVAILABLE);
            return insertOrFind(principal, key, body, redisKey, null, true, () -> null);
        }
        IdempotencyEntry entry = decoded(redisKey, ((CacheRead.Hit) read).value());
        if (entry == null) {
            // not an entry of ours: the database decides, and remember() overwrites it
            count(Decision.DB_CACHE_UNREADABLE);
            return insertOrFind(principal, key, body, redisKey, null, true, () -> null);
        }
        if (!entry.completed()) {
            return inFlightElsewhere(principal, key, body, redisKey);
        }
        boolean ours = entry.kind() == IdempotencyEntry.Kind.FINAL && entry.last().userId().equals(principal);
        if (ours && entry.keeps(body.bytes(), bodies.stamp())) {
            // the very bytes a request for this transfer was found to be, under the same rules: the same request
            count(Decision.FAST_REPLAY_FINAL);
            return replayFinal(key, entry);
        }
        TransferRequest request = body.request();
        if (!Fingerprint.sameRequest(entry.fingerprint(), body.fingerprint(), request)) {
            count(Decision.FAST_MISMATCH);
            throw reused();
        }
        if (ours) {
            // sent, failed or cancelled: the row can no longer change, so this copy is the current transfer
            count(Decision.FAST_REPLAY_FINAL);
            return replayFinal(key, entry);
        }
        return replayFromDatabase(principal, key, body, redisKey, entry);
    }

    /**
     * Another request holds the key's marker. If PostgreSQL has no row yet, that request is still on its way:
     * 409. If it has one, the original committed and its completed entry never replaced the marker (Redis
     * failed that write, or the request died after its commit): PostgreSQL answers, and the entry is written now.
     */
    private Uni<Accepted> inFlightElsewhere(String principal, IdempotencyKey key, SubmittedBody body, String redisKey) {
        TransferRequest request = body.request();
        String fingerprint = body.fingerprint();
        return transfers.findByKey(principal, key.value()).flatMap(original -> {
            if (original == null) {
                count(Decision.FAST_IN_FLIGHT);
                throw inUse();
            }
            if (!Fingerprint.sameRequest(original.requestFingerprint(), fingerprint, request)) {
                count(Decision.DB_MISMATCH);
                throw reused();
            }
            count(Decision.DB_REPLAY_AFTER_MARKER);
            return remember(redisKey, original, body).replaceWith(new Accepted(original, true, null));
        });
    }

    /** A final entry answers the replay: it is what the provider did; {@link FinalRows} sees that its row exists. */
    private Uni<Accepted> replayFinal(IdempotencyKey key, IdempotencyEntry entry) {
        // the kept response only if it was written under this build's shape
        String response = entry.response() != null && bodies.stamp().equals(entry.stamp()) ? entry.response() : null;
        return finalRows.check(key, entry.last()).replaceWith(new Accepted(entry.last(), true, response));
    }

    /** A completed entry whose transfer was still moving when it was written: the row has the current state. */
    private Uni<Accepted> replayFromDatabase(String principal, IdempotencyKey key, SubmittedBody body, String redisKey,
                                             IdempotencyEntry entry) {
        return transfers.findById(entry.transferId()).flatMap(original -> {
            if (original == null) {
                // the entry records an intent the database no longer has a row for (it lost the commit)
                return recreate(principal, key, body, redisKey, entry);
            }
            if (!original.userId().equals(principal)) {
                // not this principal's row: an entry that cannot be ours, so the database decides
                count(Decision.DB_CACHE_UNREADABLE);
                return insertOrFind(principal, key, body, redisKey, null, true, () -> null);
            }
            count(Decision.FAST_REPLAY);
            // the entry keeps the body only if it is the row's request, not only the entry's
            boolean sameAsRow = Fingerprint.sameRequest(original.requestFingerprint(), body.fingerprint(), body.request());
            Uni<Void> keepFinal = original.status().isTerminal()
                    ? cache.replace(redisKey, (sameAsRow ? finalEntry(original, body) : IdempotencyEntry.finalState(original)).encode())
                            .onFailure().recoverWithNull()
                    : Uni.createFrom().voidItem();
            return keepFinal.replaceWith(new Accepted(original, true, null));
        });
    }

    /**
     * The entry says this intent was accepted as transfer {@code entry.transferId()}, and may have been sent, but the
     * database has no such row: it lost the commit (a failover, a crash, a restore). If the key has a row after all,
     * that row answers. Otherwise the row is created again with the same id and the same derived reference, in
     * {@code reconciling}: the provider is asked before anything is sent, no earlier than one full send window from
     * now, so a send still in flight is seen too. The client gets a replay, as for any accepted intent.
     */
    private Uni<Accepted> recreate(String principal, IdempotencyKey key, SubmittedBody body, String redisKey,
                                   IdempotencyEntry entry) {
        TransferRequest request = body.request();
        String fingerprint = body.fingerprint();
        NewTransfer lost = newTransfer(entry.transferId(), principal, key, request, fingerprint);
        // the first send cannot have left before the transfer was created; an entry that does not say when is at most
        // the retention old
        OffsetDateTime firstSentNoEarlierThan = (entry.createdAt() != null ? entry.createdAt()
                : Instant.now().minus(config.idempotency().retention())).atOffset(ZoneOffset.UTC);
        return transfers.findByKey(principal, key.value())
                .flatMap(existing -> existing != null ? Uni.createFrom().item(existing)
                        : transfers.insertRecovered(lost, firstSentNoEarlierThan, actor).flatMap(created -> {
                            if (created != null) {
                                count(Decision.DB_RECREATED);
                                LOG.warnf("transferId=%s step=idempotency the database had lost this accepted transfer: re-created "
                                        + "from its idempotency record, the provider is asked before any send", created.id());
                                return Uni.createFrom().item(created);
                            }
                            return transfers.findByKey(principal, key.value());
                        }))
                .flatMap(row -> {
                    if (row == null) {
                        throw new IllegalStateException("no row for the key after re-creating transfer " + entry.transferId());
                    }
                    if (!Fingerprint.sameRequest(row.requestFingerprint(), fingerprint, request)) {
                        count(Decision.DB_MISMATCH);
                        throw reused();
                    }
                    return remember(redisKey, row, body).replaceWith(new Accepted(row, true, null));
                });
    }

    /**
     * The database path: insert, or find the original and compare fingerprints. A request scheduled for an instant
     * that has passed creates nothing: it is the retry of an accepted one (a replay, or 422), or it is not valid.
     *
     * <p>{@code unseen}: Redis could not say whether the key was used before (no answer, or a value not ours). The
     * entry it may hold can name an intent whose row the database lost ({@link #recreate} is what reading it would
     * have done), so a key without a row may still have been paid: the row is inserted for a provider lookup before
     * any send when the database may have lost commits ({@link TransferRepository#insertLookupFirst}). Not a transfer
     * scheduled past the clock-skew bound: the same intent lost would not have been due yet, so nothing of it was sent.
     */
    private Uni<Accepted> insertOrFind(String principal, IdempotencyKey key, SubmittedBody body, String redisKey,
                                       String ourMarker, boolean unseen, Supplier<FirstClaim> firstClaim) {
        TransferRequest request = body.request();
        String fingerprint = body.fingerprint();
        // random bits only: the inserting statement puts the database's time in them (TransferSql.NEW_ID)
        NewTransfer candidate = newTransfer(UUID.randomUUID(), principal, key, request, fingerprint);
        boolean late = request.executeAt() != null && !request.executeAt().toInstant().isAfter(Instant.now());
        boolean lookupFirst = unseen && (request.executeAt() == null
                || !request.executeAt().toInstant().isAfter(Instant.now().plus(config.pipeline().clockSkewBound())));
        Uni<Accepted> created = late ? Uni.createFrom().nullItem()
                : lookupFirst ? transfers.insertLookupFirst(candidate, config.pipeline().pendingGrace(), actor)
                        .map(inserted -> inserted == null ? null : new Accepted(inserted, false, null))
                        .invoke(inserted -> {
                            if (inserted != null && inserted.transfer().status() == TransferStatus.RECONCILING) {
                                count(Decision.DB_LOOKUP_FIRST);
                                // every new transfer of a Redis outage may take this path: the counter is the signal
                                LOG.debugf("transferId=%s step=idempotency accepted without its idempotency record on a "
                                        + "database that may have lost it: the provider is asked before any send", inserted.transfer().id());
                            }
                        })
                : insert(candidate, firstClaim);
        return created
                .flatMap(inserted -> inserted != null
                        ? Uni.createFrom().item(inserted)
                        : transfers.findByKey(principal, key.value()).<Accepted>flatMap(original -> {
                            if (original == null && late) {
                                Uni<Void> release = ourMarker == null ? Uni.createFrom().voidItem()
                                        : cache.deleteIfHolds(redisKey, ourMarker).onFailure().recoverWithNull().replaceWithVoid();
                                return release.chain(() -> Uni.createFrom().<Accepted>failure(executeAtPassed()));
                            }
                            if (original == null) {
                                throw new IllegalStateException("conflict on (user_id, idempotency_key) without a row");
                            }
                            return Uni.createFrom().item(new Accepted(original, true, null));
                        }))
                // the entry keeps the body only when it was found to be the request (a 422's body is not)
                .call(accepted -> remember(redisKey, accepted.transfer(), !accepted.replayed()
                        || Fingerprint.sameRequest(accepted.transfer().requestFingerprint(), fingerprint, request) ? body : null))
                .map(accepted -> {
                    if (accepted.replayed() && !Fingerprint.sameRequest(accepted.transfer().requestFingerprint(), fingerprint, request)) {
                        count(Decision.DB_MISMATCH);
                        throw reused();
                    }
                    if (accepted.replayed()) {
                        count(Decision.DB_REPLAY);
                    }
                    return accepted;
                })
                // nothing was written when the funds did not cover it: the key is free for a retry once they do
                .onFailure(e -> (!(e instanceof ProblemException) || ((ProblemException) e).type() == ProblemType.INSUFFICIENT_FUNDS)
                        && ourMarker != null)
                .call(() -> cache.deleteIfHolds(redisKey, ourMarker).onFailure().recoverWithNull());
    }

    /**
     * A new transfer to be sent now: inserted and claimed in one statement when {@code firstClaim} answers a claim,
     * else inserted pending. {@code null} when the key exists already.
     */
    private Uni<Accepted> insert(NewTransfer candidate, Supplier<FirstClaim> firstClaim) {
        FirstClaim claim = candidate.executeAt() == null ? firstClaim.get() : null;
        if (claim == null) {
            return transfers.insert(candidate, config.pipeline().pendingGrace(), actor)
                    .map(inserted -> inserted == null ? null : new Accepted(inserted, false, null));
        }
        return transfers.insertClaimed(candidate, config.pipeline().pendingGrace(), actor, claim.worker(), claim.lease(),
                        claim.reason())
                .map(inserted -> inserted == null ? null : new Accepted(inserted.accepted(), false, null, inserted.claim()));
    }

    /** The completed entry replaces our marker; if Redis is gone the database still remembers. */
    private Uni<Void> remember(String redisKey, Transfer transfer, SubmittedBody sameRequest) {
        String entry = (transfer.status().isTerminal() && sameRequest != null ? finalEntry(transfer, sameRequest)
                : IdempotencyEntry.of(transfer)).encode();
        return cache.set(redisKey, entry, config.idempotency().retention().toMillis())
                .onFailure().invoke(e -> LOG.debugf("transferId=%s step=idempotency could not cache the completed key: %s",
                        transfer.id(), e.toString()))
                .onFailure().recoverWithNull();
    }

    /**
     * The final entry of {@code transfer}, keeping {@code sameRequest}'s bytes (a body found to be the transfer's
     * request) and the response a replay answers; a plain final entry when the bytes cannot stand for the request.
     */
    private IdempotencyEntry finalEntry(Transfer transfer, SubmittedBody sameRequest) {
        String text = sameRequest.text();
        return text == null ? IdempotencyEntry.finalState(transfer)
                : IdempotencyEntry.finalState(transfer, bodies.stamp(), text, bodies.of(transfer));
    }

    /**
     * {@link IdempotencyEntry#decode}, with final entries remembered by the key they were read from and kept only while
     * that key holds exactly the same text: a final entry never changes and a text decodes to one entry only, so a
     * remembered one is what decoding again would give. Looked up by the key (short, and hashed once per request however
     * often a request asks), then compared with the text. Past the bound the remembered ones are dropped at once (a
     * replayed key is decoded again on its next replay).
     */
    private IdempotencyEntry decoded(String entryKey, String value) {
        Decoded known = finalEntries.get(entryKey);
        if (known != null && known.text().equals(value)) {
            return known.entry();
        }
        IdempotencyEntry entry = IdempotencyEntry.decode(value);
        if (entry != null && entry.kind() == IdempotencyEntry.Kind.FINAL && maxDecoded > 0) {
            if (finalEntries.size() >= maxDecoded) {
                finalEntries.clear();
            }
            finalEntries.put(entryKey, new Decoded(value, entry));
        }
        return entry;
    }

    /**
     * Names our in-flight marker, so only this request's cleanup deletes it: 64 random bits drawn once per process and a
     * counter, so no two markers of any instance share a token. It never leaves the service, so it need not be
     * unpredictable; a random UUID per marker (a read of the system's random source under a lock) was about half a per
     * cent of a new transfer's profile samples.
     */
    private static String markerToken() {
        return MARKER_PREFIX + Long.toHexString(MARKERS.incrementAndGet());
    }

    private NewTransfer newTransfer(UUID id, String principal, IdempotencyKey key, TransferRequest request, String fingerprint) {
        return new NewTransfer(id, principal, key.value(), fingerprint, request.amount(), request.currency(),
                request.destination().iban(), request.destination().name(), request.description(),
                providerReference(principal, key), request.executeAt());
    }

    /**
     * The provider's idempotency key for an intent, derived from it: the same (principal, Idempotency-Key) always gives
     * the same reference, so a transfer the database lost and created again is the payment the provider already knows,
     * whether it is re-created from its idempotency record or, when Redis lost that record too, as a new row with a new
     * id; and no two intents share one. The id stays out of it for that second case: with it, a lost commit and a lost
     * Redis entry together would send one intent under two references, and the provider would pay twice. A key used
     * again after its window (docs/safety.md "Idempotency policy") therefore reaches the provider under the reference
     * of the payment it made then; start-up refuses a key window shorter than the provider's, so by then the provider
     * has forgotten that reference and executes the new send. Keyed by {@code ledgerline.idempotency.reference-secret},
     * so nobody outside can tell a reference from a principal and a key. 32 hex digits (128 bits).
     */
    String providerReference(String principal, IdempotencyKey key) {
        return "ll_" + references.hex(principal.length() + ":" + principal + "|" + key.value()).substring(0, 32);
    }

    private ProblemException inUse() {
        String retryAfter = Integer.toString(config.idempotency().retryAfterSeconds());
        return new ProblemException(ProblemType.IDEMPOTENCY_KEY_IN_USE,
                "The first request with this Idempotency-Key is still being processed; retry after " + retryAfter + " s.",
                null, Map.of("Retry-After", retryAfter));
    }

    /** The same 400 as the parser's field errors: a new transfer cannot be scheduled for the past. */
    private static ProblemException executeAtPassed() {
        return new ProblemException(ProblemType.VALIDATION_FAILED, "One field is not valid.",
                List.of(new Problem.FieldError("executeAt", "must be in the future; leave it out to send at once")), Map.of());
    }

    private static ProblemException reused() {
        return new ProblemException(ProblemType.IDEMPOTENCY_KEY_REUSED,
                "This Idempotency-Key was already used with a different request body; use a new key for a new transfer.");
    }

    private void count(Decision decision) {
        decisions.get(decision).increment();
    }
}
