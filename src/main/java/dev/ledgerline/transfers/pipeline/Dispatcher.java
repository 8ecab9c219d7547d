package dev.ledgerline.transfers.pipeline;

import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.transfers.transfer.TransferRepository.Seen;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.interceptor.Interceptor;
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
 * <p>Dispatch on accept and the sweeper's drain share this one budget. The sweeper may fill it only up to
 * {@code max-in-flight} less {@code accept-reserve}, so a drain of a large backlog never takes the last
 * slots from the transfers being accepted right now. Once stopped (shutdown), nothing new starts here.
 */
// built at start-up, before the scheduler starts, rather than lazily on an event loop at first use
@Startup(Interceptor.Priority.PLATFORM_BEFORE - 1)
@ApplicationScoped
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

    public Dispatcher(TransferProcessor processor, LedgerlineConfig config, MeterRegistry metrics) {
        this.processor = processor;
        this.maxInFlight = config.pipeline().maxInFlight();
        this.sweeperShare = Math.max(1, maxInFlight - config.pipeline().acceptReserve());
        metrics.gauge("ledgerline.pipeline.in_flight", inFlight);
        this.started = metrics.counter("ledgerline.dispatch", "result", "started");
        this.deferred = metrics.counter("ledgerline.dispatch", "result", "deferred");
    }

    /**
     * Fire and forget, for a transfer this instance has just committed ({@link TransferProcessor#processJustAccepted}):
     * {@code false} when the instance is at its bound (or stopping) and the sweeper will take it.
     */
    public boolean dispatchAccepted(Seen seen, String why) {
        if (stopped || !tryEnter()) {
            deferred.increment();
            return false;
        }
        started.increment();
        processor.processJustAccepted(seen, why)
                .onFailure().invoke(e -> LOG.warnf("transferId=%s step=dispatch failed, the sweeper retries: %s", seen.id(), e.toString()))
                .eventually(this::passEnded)
                .subscribe().with(outcome -> { }, failure -> { });
        return true;
    }

    /**
     * Reserves up to {@code wanted} slots for swept transfers, within the sweeper's share of the budget:
     * the number reserved, 0 when there is no room (or the instance is stopping). Each reserved slot must be
     * used by {@link #dispatchSwept} or given back with {@link #giveBack}.
     */
    int reserveForSweep(int wanted) {
        while (!stopped && !sweepingStopped) {
            int current = inFlight.get();
            int room = Math.min(wanted, sweeperShare - current);
            if (room <= 0) {
                return 0;
            }
            if (inFlight.compareAndSet(current, current + room)) {
                return room;
            }
        }
        return 0;
    }

    /** Returns reserved slots the sweeper found no transfer for. */
    void giveBack(int slots) {
        if (slots > 0) {
            inFlight.addAndGet(-slots);
            wakeWaiter();
        }
    }

    /** Fire and forget, in a slot {@link #reserveForSweep} reserved; the pass takes the Redis lock. */
    void dispatchSwept(Seen seen, String why) {
        started.increment();
        processor.process(seen, why)
                .onFailure().invoke(e -> LOG.warnf("transferId=%s step=dispatch failed, the sweeper retries: %s", seen.id(), e.toString()))
                .eventually(this::passEnded)
                .subscribe().with(outcome -> { }, failure -> { });
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

    /** Runs one pass within the in-flight bound; the caller must have entered with {@link #tryEnter()}. */
    Uni<TransferProcessor.Outcome> run(Seen seen, String why) {
        return processor.process(seen, why)
                .onFailure().invoke(e -> LOG.warnf("transferId=%s step=dispatch failed, the sweeper retries: %s", seen.id(), e.toString()))
                .eventually(this::passEnded);
    }

    boolean tryEnter() {
        if (stopped) {
            return false;
        }
        if (inFlight.incrementAndGet() > maxInFlight) {
            inFlight.decrementAndGet();
            return false;
        }
        return true;
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
