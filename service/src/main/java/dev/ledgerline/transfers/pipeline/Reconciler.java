package dev.ledgerline.transfers.pipeline;

import dev.ledgerline.transfers.config.Breaker;
import dev.ledgerline.transfers.config.InstanceId;
import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.transfers.config.StartupOrder;
import dev.ledgerline.transfers.metrics.Meters;
import dev.ledgerline.transfers.metrics.ServiceMeters;
import dev.ledgerline.transfers.provider.PaymentProvider;
import dev.ledgerline.transfers.provider.ProviderGuards;
import dev.ledgerline.transfers.transfer.TransferRepository;
import dev.ledgerline.transfers.transfer.Reconcilable;
import dev.ledgerline.transfers.transfer.Seen;
import dev.ledgerline.transfers.transfer.TransferStatus;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

/**
 * Settles transfers whose outcome is unknown ({@code reconciling}): each due row is looked up at the provider under
 * its reference, and the answer decides:
 * <ul>
 *   <li>completed → {@code sent}, rejected → {@code failed}, through the fence of the take's version and token;</li>
 *   <li>not found → claimed and sent again with the same reference, unless a bound that ends the cycle lookup →
 *       resend has been reached ({@link #parkReason}): then the transfer is parked for an operator;</li>
 *   <li>lookup error → retried after an exponential back-off.</li>
 * </ul>
 * A reconciling row is due only once its last send can no longer execute (its deadline, the clock margin and the
 * provider's lookup lag have passed; see {@code TransferSql#TAKE_RECONCILING}), so a lookup never answers
 * for a send still in transit. The {@link Sweeper} runs one {@link #round} per sweep.
 *
 * <p>A provider outage changes only the pace: while the lookup breaker is open nothing is looked up (every lookup
 * would fail without reaching the provider and only double its row's back-off), while it is half-open one row per
 * batch, and once a breaker closes again the back-off the outage left on reconciling rows is pulled forward
 * ({@link #hastenAfterRecovery}), never before their last send's deadline plus the settle time.
 */
@Startup(StartupOrder.BEFORE_SCHEDULER)
@ApplicationScoped
public class Reconciler {

    private static final Logger LOG = Logger.getLogger(Reconciler.class);

    /** How one reconciliation ended: the {@code result} tag of {@code ledgerline.reconciliations}, in lower case. */
    enum Result { SENT, FAILED, NOT_FOUND, LOOKUP_ERROR, PARKED, STALE }

    private final TransferRepository transfers;
    private final Dispatcher dispatcher;
    private final PaymentProvider provider;
    private final LedgerlineConfig.Pipeline settings;
    /** How long after a reference's first send a resend may still leave: the provider's key window less margins. */
    private final Duration keyUsable;
    private final String actor;
    private final PipelineMetrics pipelineMetrics;
    /** {@code ledgerline.reconciliations} by result, built once: every result a lookup can end in. */
    private final Map<Result, Counter> reconciliations = new EnumMap<>(Result.class);
    private final ProviderGuards breakers;
    private final Counter hastened;
    /** Set when a provider breaker closes: the next rounds pull forward the back-offs the outage left behind. */
    private final AtomicBoolean providerRecovered = new AtomicBoolean();

    public Reconciler(PipelineMetrics pipelineMetrics, TransferRepository transfers, Dispatcher dispatcher,
                      PaymentProvider provider, LedgerlineConfig config, InstanceId instance, @ServiceMeters MeterRegistry metrics,
                      ProviderGuards breakers) {
        this.breakers = breakers;
        this.transfers = transfers;
        this.dispatcher = dispatcher;
        this.provider = provider;
        this.settings = config.pipeline();
        this.keyUsable = config.provider().keyWindow().minus(config.provider().keyWindowMargin())
                .minus(config.provider().timeout());
        this.actor = instance.value();
        this.pipelineMetrics = pipelineMetrics;
        for (Result result : Result.values()) {
            reconciliations.put(result, Meters.RECONCILIATIONS.counter(result.name().toLowerCase()).register(metrics));
        }
        this.hastened = Meters.SWEEPER_HASTENED.counter().register(metrics);
        // runs on whichever thread moves the breaker: only a flag, the next round does the work
        breakers.onClosed(() -> providerRecovered.set(true));
    }

    /** After a provider recovery, back-offs cut short; then one batch of due reconciling rows. */
    Uni<Void> round() {
        return hastenAfterRecovery().chain(this::reconcile);
    }

    /**
     * Once a provider breaker has closed again: reconciling rows whose lookups failed during the outage wait out a
     * back-off that doubled with every failure (up to {@code max-retry-backoff}), though the provider now answers.
     * Their due time moves forward to the earliest moment the in-transit rule allows
     * ({@code TransferSql#HASTEN_RECONCILING}), one bounded batch per round until a batch comes back short.
     * Only the schedule changes: the take, the lookup, the claim and the fence stay as they are, so a row another
     * instance is looking up at this moment may be looked up twice, and its version decides which outcome counts.
     */
    Uni<Void> hastenAfterRecovery() {
        if (!providerRecovered.getAndSet(false)) {
            return Uni.createFrom().voidItem();
        }
        int batch = settings.sweepBatch() * 4;
        return transfers.hastenReconciling(batch)
                .invoke(moved -> {
                    if (moved > 0) {
                        hastened.increment(moved);
                        LOG.infof("step=reconcile provider recovered: %d reconciling transfer(s) due again", moved);
                    }
                    if (moved == batch) {
                        providerRecovered.set(true);
                    }
                })
                .onFailure().invoke(e -> {
                    providerRecovered.set(true);
                    LOG.warnf("step=reconcile pulling back-offs forward failed, the next round retries: %s", e.toString());
                })
                .onFailure().recoverWithNull()
                .replaceWithVoid();
    }

    /**
     * One batch of due reconciling rows. None while the lookup breaker is open: every lookup would fail without
     * reaching the provider and only double its row's back-off. One while it is half-open (its trial call).
     */
    Uni<Void> reconcile() {
        Breaker.State lookups = breakers.lookupState();
        if (lookups == Breaker.State.OPEN) {
            return Uni.createFrom().voidItem();
        }
        int batch = lookups == Breaker.State.CLOSED ? settings.sweepBatch() : 1;
        return transfers.takeReconciling(batch, settings.retryBackoff(), settings.maxRetryBackoff())
                .flatMap(due -> forEach(due, this::reconcileOne));
    }

    private Uni<Void> reconcileOne(Reconcilable row) {
        return provider.lookup(row.providerReference())
                .flatMap(found -> switch (found.kind()) {
                    case COMPLETED -> settle(row, TransferStatus.SENT, null, "lookup: completed");
                    case REJECTED -> settle(row, TransferStatus.FAILED, found.reason(), "lookup: rejected");
                    case NOT_FOUND -> resend(row);
                })
                .onFailure().recoverWithUni(e -> {
                    count(Result.LOOKUP_ERROR);
                    LOG.infof("transferId=%s version=%d step=reconcile lookup failed, backing off: %s",
                            row.id(), row.version(), e.toString());
                    return Uni.createFrom().voidItem();
                });
    }

    private Uni<Void> settle(Reconcilable row, TransferStatus status, String failureReason, String reason) {
        return transfers.fence(row.id(), row.version(), row.token(), status, failureReason, Duration.ZERO, actor, reason, false)
                .invoke(fenced -> {
                    count(fenced ? (status == TransferStatus.SENT ? Result.SENT : Result.FAILED) : Result.STALE);
                    if (fenced) {
                        pipelineMetrics.finished(status, row.createdAt());
                    } else {
                        pipelineMetrics.staleWrite();
                    }
                    LOG.infof("transferId=%s version=%d step=reconcile %s%s", row.id(), row.version(), reason,
                            fenced ? " -> " + status.db() : ", but the row moved on (stale)");
                })
                .replaceWithVoid();
    }

    /**
     * Not found at the provider: it never executed, so the same reference may be sent again — through the claim,
     * unless one of the bounds that end the cycle lookup → resend has been reached; then the transfer is parked.
     */
    private Uni<Void> resend(Reconcilable row) {
        count(Result.NOT_FOUND);
        String parkFor = parkReason(row, OffsetDateTime.now());
        if (parkFor != null) {
            return park(row, parkFor);
        }
        if (dispatcher.admit(Dispatcher.Lane.RESEND, 1) == 0) {
            return Uni.createFrom().voidItem();
        }
        // claim only if the row is still the reconciling version we looked up
        return dispatcher.run(new Seen(row.id(), TransferStatus.RECONCILING, row.version()), Dispatcher.Lane.RESEND,
                "lookup: not found, resending").replaceWithVoid();
    }

    /**
     * Why a transfer the provider does not know must not be sent again, or {@code null} to resend it:
     * <ul>
     *   <li>its first send is older than the provider's key window less its margin: the provider may have forgotten
     *       the key, so a resend would be a new payment, and a "not found" may be the provider's error — money may
     *       have moved;</li>
     *   <li>the provider kept refusing its sends with a 4xx it does not explain (credentials that no longer work, a
     *       request it will not take): nothing moved;</li>
     *   <li>it made {@code max-sends} sends, each of which ended unknown: whatever the cause, named by the row's last
     *       reason, the cycle ends here.</li>
     * </ul>
     */
    String parkReason(Reconcilable row, OffsetDateTime now) {
        if (row.firstSentAt() != null && row.firstSentAt().plus(keyUsable).isBefore(now)) {
            return "provider key window passed (first send " + row.firstSentAt() + "): money may have moved, an operator "
                    + "must check with the provider";
        }
        if (row.refusedSends() >= settings.maxRefusedSends()) {
            return "parked after " + row.refusedSends() + " refused sends, needs an operator";
        }
        if (row.sends() >= settings.maxSends()) {
            return "parked after " + row.sends() + " sends with no outcome (last: " + row.reason() + "), needs an operator";
        }
        return null;
    }

    /**
     * A transfer that must not be sent again ({@link #parkReason}) stays {@code reconciling}, with a new version
     * whose reason says why, and waits for an operator (docs/operating.md "A parked transfer").
     */
    private Uni<Void> park(Reconcilable row, String reason) {
        return transfers.park(row.id(), row.version(), row.token(), actor, reason).invoke(parked -> {
            count(parked ? Result.PARKED : Result.STALE);
            LOG.warnf("transferId=%s version=%d step=reconcile %s", row.id(), row.version(),
                    parked ? reason : "park skipped, the row moved on (stale)");
        }).replaceWithVoid();
    }

    private void count(Result result) {
        reconciliations.get(result).increment();
    }

    /** Runs {@code action} on every item, 16 at a time; one item's failure is logged and never cancels the others. */
    private static <T> Uni<Void> forEach(List<T> items, Function<? super T, Uni<Void>> action) {
        if (items.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        return Multi.createFrom().iterable(items)
                .onItem().<Void>transformToUni(item -> Uni.createFrom().deferred(() -> action.apply(item))
                        .onFailure().invoke(e -> LOG.warnf("step=reconcile one transfer failed, the next round retries it: %s", e.toString()))
                        .onFailure().recoverWithNull())
                .merge(16)
                .collect().last()
                .replaceWithVoid();
    }
}
