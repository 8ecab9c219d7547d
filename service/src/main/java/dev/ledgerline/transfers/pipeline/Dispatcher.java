package dev.ledgerline.transfers.pipeline;

import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.transfers.config.StartupOrder;
import dev.ledgerline.transfers.metrics.Meters;
import dev.ledgerline.transfers.metrics.ServiceMeters;
import dev.ledgerline.transfers.transfer.Seen;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import io.smallrye.mutiny.Uni;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Starts processing right after a transfer commits, with a bounded number in flight per instance.
 * Beyond the bound nothing is queued in memory: the row is already committed as {@code pending}, and
 * the sweeper picks it up. So a burst can neither exhaust memory nor connections, nor lose a transfer.
 *
 * <p>Dispatch on accept, the reconciler's resends and the sweeper's drain share this one budget, and ask for it the
 * same way: {@link #admit} with their {@link Lane}. The sweeper may fill it only up to {@code max-in-flight} less
 * {@code accept-reserve}, so a drain of a large backlog never takes the last slots from the transfers being accepted
 * right now. Once stopped (shutdown), nothing new starts here.
 */
@Startup(StartupOrder.BEFORE_SCHEDULER)
@Singleton
public class Dispatcher {

    private static final Logger LOG = Logger.getLogger(Dispatcher.class);

    private final TransferProcessor processor;
    private final int maxInFlight;
    private final int sweeperShare;
    private final AtomicInteger inFlight = new AtomicInteger();
    /** Completed by the next pass that ends: whoever waits for room (the sweeper, the shutdown) sets it. */
    private final AtomicReference<CompletableFuture<Void>> passEnded = new AtomicReference<>();
    private final Counter started;
    private final Counter deferred;
    private volatile boolean stopped;
    private volatile boolean sweepingStopped;
    /** Free slots the waiting sweeper asked for before it wants to be woken. */
    private volatile int wantedRoom = 1;

    public Dispatcher(TransferProcessor processor, LedgerlineConfig config, @ServiceMeters MeterRegistry metrics) {
        this.processor = processor;
        this.maxInFlight = config.pipeline().maxInFlight();
        this.sweeperShare = Math.max(1, maxInFlight - config.pipeline().acceptReserve());
        Meters.PIPELINE_IN_FLIGHT.gauge(metrics, inFlight, AtomicInteger::doubleValue);
        this.started = Meters.DISPATCH.counter("started").register(metrics);
        this.deferred = Meters.DISPATCH.counter("deferred").register(metrics);
    }

    /** Who asks for in-flight slots, which decides how much of the budget it may fill and how its pass starts. */
    public enum Lane {
        /**
         * A transfer this instance has just committed: the whole budget, and its first pass skips the Redis lock
         * ({@link TransferProcessor#processJustAccepted}). One refused is counted {@code deferred}: the sweeper takes it.
         */
        ACCEPT,
        /** A resend after a provider lookup found nothing: the whole budget. */
        RESEND,
        /** The sweeper's drain of pending rows: the budget less {@code accept-reserve}. */
        SWEEP
    }

    /**
     * The one admission: reserves up to {@code wanted} slots for {@code lane}, and answers how many (0 when there is
     * no room or the instance is stopping; the sweeper's lane also stops when shutdown begins). Each reserved slot
     * must be used by one {@link #start} or {@link #run}, or given back with {@link #giveBack}.
     */
    public int admit(Lane lane, int wanted) {
        int bound = lane == Lane.SWEEP ? sweeperShare : maxInFlight;
        while (!stopped && !(lane == Lane.SWEEP && sweepingStopped)) {
            int current = inFlight.get();
            int room = Math.min(wanted, bound - current);
            if (room <= 0) {
                break;
            }
            if (inFlight.compareAndSet(current, current + room)) {
                return room;
            }
        }
        if (lane == Lane.ACCEPT) {
            deferred.increment();
        }
        return 0;
    }

    /** Returns reserved slots nobody used. */
    void giveBack(int slots) {
        if (slots > 0) {
            inFlight.addAndGet(-slots);
            wakeWaiter();
        }
    }

    /** Fire and forget, in a slot {@link #admit} reserved for {@code lane}. */
    public void start(Seen seen, Lane lane, String why) {
        started.increment();
        run(seen, lane, why).subscribe().with(outcome -> { }, failure -> { });
    }

    /** Runs one pass in a slot {@link #admit} reserved for {@code lane}; the slot is free again when the pass ends. */
    Uni<TransferProcessor.Outcome> run(Seen seen, Lane lane, String why) {
        Uni<TransferProcessor.Outcome> pass = lane == Lane.ACCEPT
                ? processor.processJustAccepted(seen, why)
                : processor.process(seen, why);
        return pass
                .onFailure().invoke(e -> LOG.warnf("transferId=%s step=dispatch failed, the sweeper retries: %s", seen.id(), e.toString()))
                .eventually(this::passEnded);
    }

    /**
     * Completes once the sweeper's share has at least {@code slots} free (passes ending free them), or after
     * {@code atMost}: the sweeper waits here instead of on a fixed tick when the budget is full, and waits for
     * a few slots rather than one so that a drain takes rows in batches, not one statement per finished pass.
     * The signal is registered before room is checked, so a pass that ends in between is not missed.
     */
    Uni<Void> awaitRoom(int slots, Duration atMost) {
        wantedRoom = Math.max(1, Math.min(slots, sweeperShare));
        CompletableFuture<Void> signal = passEnded.updateAndGet(f -> f == null || f.isDone() ? new CompletableFuture<>() : f);
        if (sweeperShare - inFlight.get() >= wantedRoom) {
            return Uni.createFrom().voidItem();
        }
        return Uni.createFrom().completionStage(signal)
                .ifNoItem().after(atMost).recoverWithItem((Void) null);
    }

    /**
     * Stops starting passes and waits (blocking: call it off the event loop) until the passes in flight end
     * or {@code grace} runs out. {@code true} when none is left.
     */
    boolean stopAndAwaitIdle(Duration grace) throws InterruptedException {
        stopped = true;
        long deadline = System.nanoTime() + grace.toNanos();
        while (inFlight.get() > 0) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            CompletableFuture<Void> signal = passEnded.updateAndGet(f -> f == null || f.isDone() ? new CompletableFuture<>() : f);
            if (inFlight.get() == 0) {
                break;
            }
            try {
                signal.get(left, TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                return inFlight.get() == 0;
            } catch (java.util.concurrent.ExecutionException impossible) {
                // the signal is only ever completed normally
            }
        }
        return true;
    }

    /** The sweeper takes no new backlog from now on (shutdown has begun); dispatch on accept goes on. */
    void stopSweeping() {
        sweepingStopped = true;
        wakeWaiter();
    }

    /** Whether the sweeper should stop taking pending work. */
    boolean stopped() {
        return stopped || sweepingStopped;
    }

    int inFlight() {
        return inFlight.get();
    }

    private void passEnded() {
        int left = inFlight.decrementAndGet();
        if (stopped || sweeperShare - left >= wantedRoom) {
            wakeWaiter();
        }
    }

    private void wakeWaiter() {
        CompletableFuture<Void> waiter = passEnded.getAndSet(null);
        if (waiter != null) {
            waiter.complete(null);
        }
    }
}
