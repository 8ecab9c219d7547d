package dev.ledgerline.transfers.service;

import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.transfers.idempotency.CacheRead;
import dev.ledgerline.transfers.idempotency.IdempotencyKey;
import dev.ledgerline.transfers.idempotency.IdempotencyService;
import dev.ledgerline.transfers.idempotency.SubmittedBody;
import dev.ledgerline.transfers.metrics.Meters;
import dev.ledgerline.transfers.metrics.ServiceMeters;
import dev.ledgerline.transfers.pipeline.Backlog;
import dev.ledgerline.transfers.pipeline.Dispatcher;
import dev.ledgerline.transfers.pipeline.PipelineMetrics;
import dev.ledgerline.transfers.problem.ProblemException;
import dev.ledgerline.transfers.problem.ProblemType;
import dev.ledgerline.transfers.ratelimit.RateLimiter;
import dev.ledgerline.transfers.transfer.LongPolls;
import dev.ledgerline.transfers.transfer.Transfer;
import dev.ledgerline.transfers.transfer.TransferEvent;
import dev.ledgerline.transfers.transfer.TransferRepository;
import dev.ledgerline.transfers.transfer.TransferRequest;
import dev.ledgerline.transfers.transfer.TransferStatus;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.smallrye.mutiny.Uni;
import jakarta.inject.Singleton;

import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * What the transfer endpoints do besides HTTP: admission (the overload bound, then the principal's rate
 * limit), the idempotent accept and the dispatch that follows it, the outcome of every POST as a counter,
 * the owner's cancel, ownership scoping and paging. Another principal's transfer is indistinguishable from a missing
 * one (404).
 */
@Singleton
public class TransferService {

    private static final Pattern CANONICAL_UUID = Pattern.compile("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");

    /** Who asks: the token's subject, and whether its groups let it read every principal's transfers. */
    public record Caller(String principal, boolean readsAll) {
    }

    /**
     * The answer to a POST: the transfer as last read, whether it was replayed, how long it was held (or null), and
     * the response body kept for it by its idempotency entry (or null: written from the transfer).
     */
    public record Created(Transfer transfer, boolean replayed, Duration waited, String response) {
    }

    /**
     * What a {@code GET} of the key's idempotency entry found for this very request before it reached
     * {@link #create}: the entry's name ({@code IdempotencyService#entryKey}, hashed once per request) and its text,
     * or {@code null} when the key had none.
     */
    public record EntryRead(String entryKey, String value) {
    }

    /** One page of the listing; {@code continueAfter} is the last row when more follow, else null. */
    public record Page(List<Transfer> rows, Transfer continueAfter) {
    }

    /** A transfer and its history. */
    public record History(Transfer transfer, List<TransferEvent> events) {
    }

    /** The {@code outcome} tag of {@code ledgerline.transfers.requests}: how each POST ended. */
    enum Outcome { OVERLOADED, RATE_LIMITED, REJECTED, CREATED, REPLAYED, CONFLICT, MISMATCH, INSUFFICIENT_FUNDS }

    private final IdempotencyService idempotency;
    private final Dispatcher dispatcher;
    private final TransferRepository transfers;
    private final RateLimiter limiter;
    private final Backlog backlog;
    private final LongPolls polls;
    private final LedgerlineConfig config;
    private final PipelineMetrics pipelineMetrics;
    private final Map<Outcome, Counter> outcomes = new EnumMap<>(Outcome.class);

    public TransferService(IdempotencyService idempotency, Dispatcher dispatcher, TransferRepository transfers,
                           RateLimiter limiter, Backlog backlog, LongPolls polls, LedgerlineConfig config,
                           PipelineMetrics pipelineMetrics, @ServiceMeters MeterRegistry metrics) {
        this.idempotency = idempotency;
        this.dispatcher = dispatcher;
        this.transfers = transfers;
        this.limiter = limiter;
        this.backlog = backlog;
        this.polls = polls;
        this.config = config;
        this.pipelineMetrics = pipelineMetrics;
        for (Outcome outcome : Outcome.values()) {
            outcomes.put(outcome, Meters.TRANSFERS_REQUESTS.counter(outcome.name().toLowerCase()).register(metrics));
        }
    }

    /**
     * Admits, accepts and dispatches one POST. The overload bound comes first, before anything that costs a
     * round trip, then the rate limit, and only then is a body's problem answered: a flood of invalid requests costs
     * its sender tokens too. The body is parsed ({@link SubmittedBody#request}) only when a decision needs it. The key's
     * idempotency entry is read first; a replay it answers as kept spends this instance's replay bucket, anything else
     * the shared bucket, whose script reads the entry again ({@link RateLimiter#admitAndRead}); a key read empty has
     * its body parsed before that script, which also sets the in-flight marker when the key is still empty, so a
     * first use is admitted and marked in one round trip. An Idempotency-Key header that is not a valid key still
     * costs a token before its 400. With {@code wait}, the answer waits for a final status.
     */
    public Uni<Created> create(String principal, Supplier<IdempotencyKey> idempotencyKey, SubmittedBody body,
                               Optional<Duration> wait) {
        return create(principal, idempotencyKey, body, wait, null);
    }

    /**
     * {@link #create(String, Supplier, SubmittedBody, Optional)} for a request whose entry was read already
     * ({@code read}; {@code null}: not read): the admission does not read it again ({@link RateLimiter#admitHaving}).
     */
    public Uni<Created> create(String principal, Supplier<IdempotencyKey> idempotencyKey, SubmittedBody body,
                               Optional<Duration> wait, EntryRead read) {
        if (backlog.overloaded()) {
            count(Outcome.OVERLOADED);
            String retryAfter = Integer.toString(config.overload().retryAfterSeconds());
            throw new ProblemException(ProblemType.SERVICE_UNAVAILABLE,
                    "The service is behind on transfers it already accepted and takes no new ones for now; retry after "
                            + retryAfter + " s with the same Idempotency-Key.", null, Map.of("Retry-After", retryAfter));
        }
        IdempotencyKey key;
        try {
            key = idempotencyKey.get();
        } catch (ProblemException invalidKey) {
            return limiter.admit(principal, RateLimiter.Kind.WRITE)
                    .onFailure().invoke(e -> count(Outcome.RATE_LIMITED))
                    .chain(() -> {
                        count(Outcome.REJECTED);
                        return Uni.createFrom().failure(invalidKey);
                    });
        }
        String entryKey = read != null ? read.entryKey() : idempotency.entryKey(principal, key);
        Predicate<String> kept = value -> idempotency.answersAsKept(principal, body, entryKey, value);
        // a key found empty is marked in flight by the admission's script: a first use costs one round trip less
        Supplier<RateLimiter.Mark> mark = () -> {
            String marker = idempotency.markerFor(body);
            return marker == null ? null : new RateLimiter.Mark(marker, idempotency.markerTtlMillis());
        };
        Uni<RateLimiter.Admitted> admission = read == null
                ? limiter.admitAndRead(principal, RateLimiter.Kind.WRITE, entryKey, kept, mark)
                : limiter.admitHaving(principal, RateLimiter.Kind.WRITE, entryKey, kept, read.value(), mark);
        return admission
                .onFailure().invoke(e -> count(Outcome.RATE_LIMITED))
                .chain(admitted -> accept(principal, key, entryKey, body,
                        CacheRead.admitted(admitted.answered(), admitted.value(), admitted.marked()), wait));
    }

    /** The key's idempotency entry as one {@code GET} reads it now; fails when Redis cannot answer. */
    public Uni<EntryRead> readEntry(String principal, IdempotencyKey key) {
        String entryKey = idempotency.entryKey(principal, key);
        return idempotency.read(entryKey).map(value -> new EntryRead(entryKey, value));
    }

    /**
     * Whether {@code read} is a final entry of the principal's that keeps exactly {@code body}: a replay {@link #create}
     * answers from the response it keeps, writing nothing and sending nothing.
     */
    public boolean answersAsKept(String principal, SubmittedBody body, EntryRead read) {
        return read.value() != null && idempotency.answersAsKept(principal, body, read.entryKey(), read.value());
    }

    private Uni<Created> accept(String principal, IdempotencyKey key, String entryKey, SubmittedBody body,
                                CacheRead looked, Optional<Duration> wait) {
        // a transfer to send now is claimed by its INSERT when this instance has room to send it (Dispatcher.FirstPass)
        Dispatcher.FirstPass first = dispatcher.firstPass();
        // deferred: a body that does not parse fails inside the chain, so it is counted as rejected below
        return Uni.createFrom().deferred(() -> idempotency.accept(principal, key, entryKey, body, looked, first::claim))
                .onFailure().invoke(first::abandoned)
                .onCancellation().invoke(first::abandoned)
                .invoke(accepted -> {
                    first.accepted(accepted.transfer(), accepted.replayed(), accepted.claim());
                    count(accepted.replayed() ? Outcome.REPLAYED : Outcome.CREATED);
                })
                .onFailure(ProblemException.class).invoke(e -> count(switch (((ProblemException) e).type()) {
                    case IDEMPOTENCY_KEY_IN_USE -> Outcome.CONFLICT;
                    case IDEMPOTENCY_KEY_REUSED -> Outcome.MISMATCH;
                    case INSUFFICIENT_FUNDS -> Outcome.INSUFFICIENT_FUNDS;
                    default -> Outcome.REJECTED;
                }))
                .flatMap(accepted -> {
                    Transfer t = accepted.transfer();
                    // beyond the principal's share of held polls the transfer exists already: answer without waiting
                    return wait.flatMap(w -> polls.hold(principal, t, x -> x.status().isTerminal(), w)
                                    .map(held -> held.map(latest -> new Created(latest, accepted.replayed(), w, null))))
                            .orElseGet(() -> Uni.createFrom().item(new Created(t, accepted.replayed(), null, accepted.response())));
                });
    }

    /** The caller's transfer, or 404: also for another principal's transfer and for ids that are not UUIDs. */
    public Uni<Transfer> find(Caller caller, String rawId) {
        return admitRead(caller.principal()).chain(() -> visible(caller, rawId));
    }

    /** The caller's transfer and its history, or 404 as {@link #find}. */
    public Uni<History> history(Caller caller, String rawId) {
        return find(caller, rawId).flatMap(t -> transfers.events(t.id()).map(events -> new History(t, events)));
    }

    /** Holds a read until {@code done} holds or {@code wait} passes; 429 beyond the caller's share of held polls. */
    public Uni<Transfer> await(Caller caller, Transfer t, Predicate<Transfer> done, Duration wait) {
        return polls.hold(caller.principal(), t, done, wait).orElseThrow(() -> new ProblemException(ProblemType.RATE_LIMITED,
                "You already hold " + config.longPoll().maxWaitingPerPrincipal() + " waiting requests; retry when one has been answered.",
                null, Map.of("Retry-After", "1")));
    }

    /**
     * Cancels the caller's own transfer (another principal's is 404, even for a token that reads all) while nobody
     * has claimed it: {@code pending} becomes {@code cancelled} by one conditional UPDATE at the version read, so a
     * claim and a cancel racing for the row cannot both win. Cancelling a cancelled transfer answers it again; any
     * other status is 409 {@code transfer-not-cancellable} with that status. Costs a write token.
     */
    public Uni<Transfer> cancel(String principal, String rawId) {
        return limiter.admit(principal, RateLimiter.Kind.WRITE)
                .chain(() -> visible(new Caller(principal, false), rawId))
                .flatMap(t -> cancel(t, principal));
    }

    private Uni<Transfer> cancel(Transfer seen, String principal) {
        if (seen.status() != TransferStatus.PENDING) {
            return alreadyCancelledOrRefused(seen);
        }
        return transfers.cancel(seen.id(), seen.version(), principal, "cancelled by its owner")
                .flatMap(cancelled -> {
                    if (cancelled != null) {
                        pipelineMetrics.cancelled();
                        return Uni.createFrom().item(cancelled);
                    }
                    // the row is no longer the pending version read: a claim (or another cancel) won, or the database
                    // server is not adopted yet and a pending row there may hide a claim it forgot
                    return transfers.findById(seen.id()).flatMap(now -> now.status() == TransferStatus.PENDING
                            ? Uni.createFrom().failure(new ProblemException(ProblemType.SERVICE_UNAVAILABLE,
                                    "The transfer cannot be cancelled right now; retry shortly.", null, Map.of("Retry-After", "2")))
                            : alreadyCancelledOrRefused(now));
                });
    }

    private static Uni<Transfer> alreadyCancelledOrRefused(Transfer t) {
        if (t.status() == TransferStatus.CANCELLED) {
            return Uni.createFrom().item(t);
        }
        return Uni.createFrom().failure(new ProblemException(ProblemType.TRANSFER_NOT_CANCELLABLE,
                "The transfer is " + t.status().db() + ": it was claimed for sending, so it can no longer be cancelled.",
                null, Map.of(), t.status().db()));
    }

    /** Spends one write token of the principal; a 429 problem when its bucket is empty. */
    public Uni<Void> admitWrite(String principal) {
        return limiter.admit(principal, RateLimiter.Kind.WRITE);
    }

    /** Spends one read token of the principal; a 429 problem when its bucket is empty. */
    public Uni<Void> admitRead(String principal) {
        return limiter.admit(principal, RateLimiter.Kind.READ);
    }

    /**
     * Admits the operations listing: only {@code transfers.read.all} lists every principal's transfers; anyone else
     * is 403 before a read token is spent or a parameter is read.
     */
    public Uni<Void> admitListingOfAll(Caller caller) {
        if (!caller.readsAll()) {
            return Uni.createFrom().failure(new ProblemException(ProblemType.FORBIDDEN,
                    "Listing every principal's transfers needs the group transfers.read.all; your own transfers are listed at "
                            + "/v1/me/transfers and found by key with ?idempotencyKey=."));
        }
        return admitRead(caller.principal());
    }

    /** Up to {@code limit} transfers in a status (or any), unchanged for {@code olderThan}, after the cursor. */
    public Uni<Page> page(TransferStatus status, Duration olderThan, OffsetDateTime afterUpdatedAt, UUID afterId, int limit) {
        return transfers.list(status, olderThan, afterUpdatedAt, afterId, limit + 1).map(rows -> paged(rows, limit));
    }

    /**
     * Up to {@code limit} of the caller's own transfers in a status (or any), newest first, created before the
     * cursor. Scoped to the caller's principal whatever its groups: {@code transfers.read.all} lists everyone's
     * through {@link #page}.
     */
    public Uni<Page> ownPage(Caller caller, TransferStatus status, OffsetDateTime beforeCreatedAt, UUID beforeId, int limit) {
        return transfers.listOwn(caller.principal(), status, beforeCreatedAt, beforeId, limit + 1).map(rows -> paged(rows, limit));
    }

    /**
     * The caller's own transfer created under {@code key}, as a page of zero or one. Keys are scoped to the principal,
     * so another principal's transfer under the same key is never found, whatever the caller's groups. No transfer
     * does not mean none will be: a POST under the key may still be in flight, so a client retries its POST with the
     * same key, never a new one.
     */
    public Uni<Page> findByKey(Caller caller, IdempotencyKey key) {
        return transfers.findByKey(caller.principal(), key.value())
                .map(t -> new Page(t == null ? List.of() : List.of(t), null));
    }

    /** The first {@code limit} of {@code rows} (fetched one beyond the page, so a last full page has no cursor). */
    private static Page paged(List<Transfer> rows, int limit) {
        boolean more = rows.size() > limit;
        List<Transfer> page = more ? rows.subList(0, limit) : rows;
        return new Page(page, more ? page.get(page.size() - 1) : null);
    }

    private Uni<Transfer> visible(Caller caller, String rawId) {
        if (!CANONICAL_UUID.matcher(rawId).matches()) {
            return Uni.createFrom().failure(notFound());
        }
        return transfers.findById(UUID.fromString(rawId))
                .onItem().ifNull().failWith(TransferService::notFound)
                .invoke(t -> {
                    if (!caller.readsAll() && !t.userId().equals(caller.principal())) {
                        throw notFound();
                    }
                });
    }

    private static ProblemException notFound() {
        return new ProblemException(ProblemType.NOT_FOUND, "No transfer with this id is visible to you.");
    }

    private void count(Outcome outcome) {
        outcomes.get(outcome).increment();
    }
}
