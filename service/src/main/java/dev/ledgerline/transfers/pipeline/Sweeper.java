package dev.ledgerline.transfers.pipeline;

import dev.ledgerline.transfers.config.Breaker;
import dev.ledgerline.transfers.config.InstanceId;
import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.transfers.config.StartupOrder;
import dev.ledgerline.transfers.metrics.Meters;
import dev.ledgerline.transfers.metrics.ServiceMeters;
import dev.ledgerline.transfers.provider.ProviderGuards;
import dev.ledgerline.transfers.transfer.TransferRepository;
import dev.ledgerline.transfers.transfer.Seen;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Finishes what instances dropped, safely on any number of instances (every scan is
 * {@code FOR UPDATE SKIP LOCKED} and every change a fenced UPDATE). Each round, in this order:
 * <ul>
 *   <li>a database server the pipeline has not seen yet is adopted ({@link #adoptEpoch});</li>
 *   <li>processing rows whose lease expired → {@code reconciling} (their outcome is unknown);</li>
 *   <li>pending rows nobody picked up → processed, batch after batch while a backlog lasts, as fast as the
 *       shared in-flight budget frees slots ({@link #dispatchPending});</li>
 *   <li>one batch of due reconciling rows, handed to the {@link Reconciler}.</li>
 * </ul>
 *
 * <p>A provider outage changes only the pace: while the send breaker is open the sweeper sends nothing (every call
 * would fail without reaching the provider and turn pending rows into reconciling ones), while it is half-open it
 * sends one row per batch. One item's failure never cancels the rest of a sweep.
 */
@Startup(StartupOrder.BEFORE_SCHEDULER)
@Singleton
public class Sweeper {

    private static final Logger LOG = Logger.getLogger(Sweeper.class);

    /** Longest wait for free in-flight slots before the sweeper takes what room there is (passes ending wake it sooner). */
    private static final Duration WAIT_FOR_ROOM = Duration.ofMillis(200);

    private final TransferRepository transfers;
    private final Dispatcher dispatcher;
    private final Reconciler reconciler;
    private final LedgerlineConfig.Pipeline settings;
    private final String actor;
    private final ClockWatch clocks;
    private final Counter leasesExpired;
    private final ProviderGuards breakers;
    private final Counter epochsAdopted;

    public Sweeper(ClockWatch clocks, TransferRepository transfers, Dispatcher dispatcher, Reconciler reconciler,
                   LedgerlineConfig config, InstanceId instance, @ServiceMeters MeterRegistry metrics, ProviderGuards breakers) {
        this.breakers = breakers;
        this.transfers = transfers;
        this.dispatcher = dispatcher;
        this.reconciler = reconciler;
        this.settings = config.pipeline();
        this.actor = instance.value();
        this.clocks = clocks;
        this.leasesExpired = Meters.SWEEPER_LEASES_EXPIRED.counter().register(metrics);
        this.epochsAdopted = Meters.SWEEPER_EPOCHS_ADOPTED.counter().register(metrics);
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
        return adoptEpoch()
                .chain(this::expireLeases)
                .chain(this::dispatchPending)
                .flatMap(pendingLeft -> reconciler.round().replaceWith(pendingLeft));
    }

    /**
     * Adopts the database server if it is one the pipeline has not seen (TransferSql#ADOPT_EPOCH): after a
     * restart, crash, failover or restore it may have lost claims whose sends are still in flight, so every open
     * transfer is looked up before it is sent again, and no claim is taken until this has committed. One cheap
     * index probe a round while nothing changed.
     */
    Uni<Void> adoptEpoch() {
        return transfers.adoptEpoch(actor).invoke(moved -> {
            if (moved >= 0) {
                epochsAdopted.increment();
                LOG.warnf("step=sweep the database server changed (restart, failover or restore): adopted it, %d open "
                        + "transfer(s) go through a provider lookup before any send", moved);
            }
        }).replaceWithVoid();
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
                            || breakers.sendState() != Breaker.State.CLOSED;
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
        Breaker.State sendBreaker = breakers.sendState();
        if (sendBreaker == Breaker.State.OPEN || clocks.holdingSends()) {
            // no pass could claim: the rows stay due and are taken once the provider or the clocks are back
            return Uni.createFrom().item(false);
        }
        int wanted = sendBreaker == Breaker.State.CLOSED ? settings.sweepBatch() : 1;
        return dispatcher.awaitRoom(Math.max(1, Math.min(wanted, settings.sweepBatch() / 4)), WAIT_FOR_ROOM).chain(() -> {
            int slots = dispatcher.admit(Dispatcher.Lane.SWEEP, wanted);
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
                            dispatcher.start(seen, Dispatcher.Lane.SWEEP, "swept: pending");
                        }
                        return taken == slots && sendBreaker == Breaker.State.CLOSED;
                    });
        });
    }
}
