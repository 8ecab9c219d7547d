package dev.ledgerline.transfers.pipeline;

import dev.ledgerline.transfers.config.InstanceId;
import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.transfers.provider.LookupResult;
import dev.ledgerline.transfers.provider.PaymentProvider;
import dev.ledgerline.transfers.provider.ProviderClient;
import dev.ledgerline.transfers.transfer.TransferRepository;
import dev.ledgerline.transfers.transfer.TransferRepository.Reconcilable;
import dev.ledgerline.transfers.transfer.TransferRepository.Seen;
import dev.ledgerline.transfers.transfer.TransferStatus;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.faulttolerance.api.CircuitBreakerMaintenance;
import io.smallrye.faulttolerance.api.CircuitBreakerState;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.interceptor.Interceptor;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Finishes what instances dropped, safely on any number of instances (every scan is
 * {@code FOR UPDATE SKIP LOCKED} and every change a fenced UPDATE):
 * <ul>
 *   <li>processing rows whose lease expired → {@code reconciling} (their outcome is unknown);</li>
 *   <li>pending rows nobody picked up → processed, batch after batch while a backlog lasts, as fast as the
 *       shared in-flight budget frees slots ({@link #dispatchPending});</li>
 *   <li>reconciling rows that are due → looked up at the provider: completed → {@code sent},
 *       rejected → {@code failed}, not found → claimed and sent again with the same reference,
 *       lookup error → retried after an exponential back-off.</li>
 * </ul>
 * A reconciling row is due only once its last send can no longer execute (its deadline, the clock margin and
 * the provider's lookup lag have passed; see {@code TransferRepository#TAKE_RECONCILING}), so a lookup never
 * answers for a send still in transit. After {@code ledgerline.pipeline.max-refused-sends} sends the provider
 * refused with an unexplained 4xx and then did not know, the transfer is parked for an operator instead of
 * being resent again. One item's failure never
 * cancels the rest of a sweep.
 *
 * <p>A provider outage changes only the pace (README "Recovery and overload"): while a breaker is open the
 * sweeper sends and looks up nothing (every call would fail without reaching the provider, turn pending rows
 * into reconciling ones and stretch back-offs), while it is half-open it sends or looks up one row per batch,
 * and once a breaker closes again it pulls the back-off the outage left on reconciling rows forward
 * ({@link #hastenAfterRecovery}), never before their last send's deadline plus the settle time.
 */
// built at start-up, before the scheduler starts, rather than lazily on an event loop at first use
@Startup(Interceptor.Priority.PLATFORM_BEFORE - 1)
@ApplicationScoped
public class Sweeper {

    private static final Logger LOG = Logger.getLogger(Sweeper.class);

    /** Longest wait for free in-flight slots before the sweeper takes what room there is (passes ending wake it sooner). */
    private static final Duration WAIT_FOR_ROOM = Duration.ofMillis(200);

    private final TransferRepository transfers;
    private final Dispatcher dispatcher;
    private final PaymentProvider provider;
    private final LedgerlineConfig.Pipeline settings;
    private final String actor;
    private final PipelineMetrics pipelineMetrics;
    private final Counter leasesExpired;
    /** {@code ledgerline.reconciliations} by result, built once: every result a lookup can end in. */
    private final Map<String, Counter> reconciliations;
    private final CircuitBreakerMaintenance breakers;
    private final Counter hastened;
    /** Set when a provider breaker closes: the next rounds pull forward the back-offs the outage left behind. */
    private final AtomicBoolean providerRecovered = new AtomicBoolean();

    public Sweeper(PipelineMetrics pipelineMetrics, TransferRepository transfers, Dispatcher dispatcher, PaymentProvider provider, LedgerlineConfig config,
                   InstanceId instance, MeterRegistry metrics, CircuitBreakerMaintenance breakers) {
        this.breakers = breakers;
        this.transfers = transfers;
        this.dispatcher = dispatcher;
        this.provider = provider;
        this.settings = config.pipeline();
        this.actor = instance.value();
        this.pipelineMetrics = pipelineMetrics;
        this.leasesExpired = metrics.counter("ledgerline.sweeper.leases_expired");
        this.reconciliations = Stream.of(TransferStatus.SENT.db(), TransferStatus.FAILED.db(), "not_found", "lookup_error", "parked", "stale")
                .collect(Collectors.toUnmodifiableMap(result -> result,
                        result -> metrics.counter("ledgerline.reconciliations", "result", result)));
        this.hastened = Counter.builder("ledgerline.sweeper.hastened")
                .description("Reconciling transfers whose back-off was cut short because the provider recovered")
                .register(metrics);
        // runs on whichever thread moves the breaker: only a flag, the sweeper does the work in its next round
        for (String breaker : List.of(ProviderClient.SEND_BREAKER, ProviderClient.LOOKUP_BREAKER)) {
            breakers.onStateChange(breaker, state -> {
                if (state == CircuitBreakerState.CLOSED) {
                    providerRecovered.set(true);
                }
            });
        }
    }

    @Scheduled(every = "${ledgerline.pipeline.sweep-every}", delayed = "1s",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP, identity = "ledgerline-sweeper")
    Uni<Void> sweep() {
        // round after round without waiting for the next tick while pending work is left over: the tick only
        // paces an idle sweeper, never a backlog
        return Multi.createBy().repeating().uni(this::round)
                .until(workLeft -> !workLeft || dispatcher.stopped())
                .collect().last()
                .onFailure().invoke(e -> LOG.warnf("step=sweep failed, next sweep retries: %s", e.toString()))
                .onFailure().recoverWithNull()
                .replaceWithVoid();
    }

    /**
     * Leases, then pending rows for up to {@code drain-slice}, then (after a provider recovery) back-offs cut
     * short, then one batch of reconciling rows: {@code true} when pending work was left.
     */
    Uni<Boolean> round() {
        return expireLeases()
                .chain(this::dispatchPending)
                .flatMap(pendingLeft -> hastenAfterRecovery().chain(this::reconcile).replaceWith(pendingLeft));
    }

    /**
     * Once a provider breaker has closed again: reconciling rows whose lookups failed during the outage wait out a
     * back-off that doubled with every failure (up to {@code max-retry-backoff}), though the provider now answers.
     * Their due time moves forward to the earliest moment the in-transit rule allows
     * ({@code TransferRepository#HASTEN_RECONCILING}), one bounded batch per round until a batch comes back short.
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
                        LOG.infof("step=sweep provider recovered: %d reconciling transfer(s) due again", moved);
                    }
                    if (moved == batch) {
                        providerRecovered.set(true);
                    }
                })
                .onFailure().invoke(e -> {
                    providerRecovered.set(true);
                    LOG.warnf("step=sweep pulling back-offs forward failed, the next round retries: %s", e.toString());
                })
                .onFailure().recoverWithNull()
                .replaceWithVoid();
    }

    Uni<Void> expireLeases() {
        return transfers.expireLeases(actor, settings.sweepBatch()).invoke(ids -> {
            if (!ids.isEmpty()) {
                leasesExpired.increment(ids.size());
                LOG.infof("step=sweep %d expired lease(s) moved to reconciling: %s", ids.size(), ids);
            }
        }).replaceWithVoid();
    }

    /**
     * Pending rows nobody picked up, batch after batch while batches come back full, at the pace the pipeline
     * frees in-flight slots: a batch is only as large as the sweeper's share of the budget has room for, and
     * with no room the sweeper waits for a pass to end, not for the next tick. Stops after {@code drain-slice}
     * (so leases and reconciliation get their turn), and after one batch while the provider's send breaker is not
     * closed. {@code true} when it stopped with work left.
     */
    Uni<Boolean> dispatchPending() {
        long sliceEnds = System.nanoTime() + settings.drainSlice().toNanos();
        AtomicBoolean workLeft = new AtomicBoolean();
        return Multi.createBy().repeating().uni(this::pendingBatch)
                .until(full -> {
                    workLeft.set(full);
                    return !full || dispatcher.stopped() || System.nanoTime() - sliceEnds > 0
                            || breakers.currentState(ProviderClient.SEND_BREAKER) != CircuitBreakerState.CLOSED;
                })
                .collect().last()
                .map(ignored -> workLeft.get())
                .invoke(left -> LOG.debugf("step=sweep pending drain paused, work left: %s", left));
    }

    /**
     * One batch: {@code true} when it came back full (or the budget had no room), i.e. more may be due. While the
     * send breaker is open none (a pass would stop at the breaker and take the Redis lock for nothing), and while
     * it is half-open one row: the breaker lets only its few trial calls through and refuses the rest, and a
     * refused send has been claimed already, so it would leave its row in {@code reconciling} until the send's
     * deadline plus the settle time has passed. Both end the sweep until the next tick.
     */
    private Uni<Boolean> pendingBatch() {
        CircuitBreakerState sendBreaker = breakers.currentState(ProviderClient.SEND_BREAKER);
        if (sendBreaker == CircuitBreakerState.OPEN) {
            return Uni.createFrom().item(false);
        }
        int wanted = sendBreaker == CircuitBreakerState.CLOSED ? settings.sweepBatch() : 1;
        return dispatcher.awaitRoom(Math.max(1, Math.min(wanted, settings.sweepBatch() / 4)), WAIT_FOR_ROOM).chain(() -> {
            int slots = dispatcher.reserveForSweep(wanted);
            if (slots == 0) {
                return Uni.createFrom().item(!dispatcher.stopped());
            }
            return transfers.takePending(slots, settings.pendingGrace())
                    .onFailure().invoke(e -> dispatcher.giveBack(slots))
                    .map(due -> {
                        LOG.debugf("step=sweep took %d pending of %d asked", due.size(), slots);
                        // never more passes than slots reserved: a row left over is retaken after its pending grace
                        int taken = Math.min(slots, due.size());
                        dispatcher.giveBack(slots - taken);
                        for (Seen seen : due.subList(0, taken)) {
                            dispatcher.dispatchSwept(seen, "swept: pending");
                        }
                        return taken == slots && sendBreaker == CircuitBreakerState.CLOSED;
                    });
        });
    }

    /**
     * One batch of due reconciling rows. None while the lookup breaker is open: every lookup would fail without
     * reaching the provider and only double its row's back-off. One while it is half-open (its trial call).
     */
    Uni<Void> reconcile() {
        CircuitBreakerState lookups = breakers.currentState(ProviderClient.LOOKUP_BREAKER);
        if (lookups == CircuitBreakerState.OPEN) {
            return Uni.createFrom().voidItem();
        }
        int batch = lookups == CircuitBreakerState.CLOSED ? settings.sweepBatch() : 1;
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
                    count("lookup_error");
                    LOG.infof("transferId=%s version=%d step=reconcile lookup failed, backing off: %s",
                            row.id(), row.version(), e.toString());
                    return Uni.createFrom().voidItem();
                });
    }

    private Uni<Void> settle(Reconcilable row, TransferStatus status, String failureReason, String reason) {
        return transfers.fence(row.id(), row.version(), status, failureReason, Duration.ZERO, actor, reason, false)
                .invoke(fenced -> {
                    count(fenced ? status.db() : "stale");
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

    /** Not found at the provider: it never executed, so the same reference may be sent again — through the claim. */
    private Uni<Void> resend(Reconcilable row) {
        count("not_found");
        if (row.refusedSends() >= settings.maxRefusedSends()) {
            return park(row);
        }
        if (!dispatcher.tryEnter()) {
            return Uni.createFrom().voidItem();
        }
        // claim only if the row is still the reconciling version we looked up
        return dispatcher.run(new Seen(row.id(), TransferStatus.RECONCILING, row.version()), "lookup: not found, resending")
                .replaceWithVoid();
    }

    /**
     * The provider keeps refusing our sends with a 4xx it does not explain (credentials that no longer work, a
     * request it will not take) and never knew the payment: resending again would loop without end.
     * The transfer stays {@code reconciling} — nothing moved, nothing is lost — with a new version whose reason
     * says so, and waits for an operator (README "A transfer stuck in reconciling").
     */
    private Uni<Void> park(Reconcilable row) {
        String reason = "parked after " + row.refusedSends() + " refused sends, needs an operator";
        return transfers.park(row.id(), row.version(), actor, reason).invoke(parked -> {
            count(parked ? "parked" : "stale");
            LOG.warnf("transferId=%s version=%d step=reconcile %s", row.id(), row.version(),
                    parked ? reason : "park skipped, the row moved on (stale)");
        }).replaceWithVoid();
    }

    private void count(String result) {
        reconciliations.get(result).increment();
    }

    /** Runs {@code action} on every item, 16 at a time; one item's failure is logged and never cancels the others. */
    private static <T> Uni<Void> forEach(List<T> items, Function<? super T, Uni<Void>> action) {
        if (items.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        return Multi.createFrom().iterable(items)
                .onItem().<Void>transformToUni(item -> Uni.createFrom().deferred(() -> action.apply(item))
                        .onFailure().invoke(e -> LOG.warnf("step=sweep one item failed, the next sweep retries it: %s", e.toString()))
                        .onFailure().recoverWithNull())
                .merge(16)
                .collect().last()
                .replaceWithVoid();
    }
}
