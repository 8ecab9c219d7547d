package dev.ledgerline.transfers.pipeline;

import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.transfers.config.StartupOrder;
import dev.ledgerline.transfers.metrics.Meters;
import dev.ledgerline.transfers.metrics.ServiceMeters;
import dev.ledgerline.transfers.transfer.Claim;
import dev.ledgerline.transfers.transfer.FirstClaim;
import dev.ledgerline.transfers.transfer.Seen;
import dev.ledgerline.transfers.transfer.Transfer;
import dev.ledgerline.transfers.transfer.TransferStatus;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import io.smallrye.mutiny.Uni;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.UUID;
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
         * A transfer this instance is accepting: the whole budget, and its first pass skips the Redis lock. A transfer
         * to send now is claimed by the statement that inserts it ({@link FirstPass}, {@link TransferProcessor#sendClaimed}),
         * one inserted pending is claimed right after ({@link TransferProcessor#processJustAccepted}). One refused is
         * counted {@code deferred}: the sweeper takes it.
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

    /** Why a transfer's first pass runs: the reason its claim records. */
    public static final String ON_ACCEPT = "dispatched on accept";

    /** The first pass of one transfer being accepted here: one per POST, used by that POST's chain alone. */
    public FirstPass firstPass() {
        return new FirstPass();
    }

    /**
     * One POST's first pass. Right before a transfer to be sent now is inserted, {@link #claim} reserves it a slot
     * and answers the claim its INSERT should take; once the accept is decided, {@link #accepted} sends a transfer
     * claimed so, or starts the pass of a pending one new to this POST as before, and gives an unused slot back.
     * {@link #abandoned}: the accept failed or was cancelled.
     */
    public final class FirstPass {
        private int slots;
        private FirstClaim asked;

        private FirstPass() {
        }

        /** The claim for the INSERT to take, or {@code null}: insert the transfer pending (no room, or no send now). */
        public FirstClaim claim() {
            if (slots == 0) {
                slots = admit(Lane.ACCEPT, 1);
            }
            asked = slots == 0 ? null : processor.firstClaim(ON_ACCEPT);
            return asked;
        }

        /** The accept's outcome: {@code claim} is the claim its INSERT took, or {@code null}. */
        public void accepted(Transfer transfer, boolean replayed, Claim claim) {
            if (claim != null && slots == 1) {
                slots = 0;
                started.increment();
                inSlot(processor.sendClaimed(claim, asked), claim.id()).subscribe().with(outcome -> { }, failure -> { });
                return;
            }
            // a row accepted for a lookup first (reconciling) is the reconciler's, never the accept's send
            if (!replayed && transfer.status() == TransferStatus.PENDING) {
                // beyond the bound nothing waits in memory: the row is committed, the sweeper takes it
                if (slots == 1 || admit(Lane.ACCEPT, 1) == 1) {
                    slots = 0;
                    start(new Seen(transfer.id(), transfer.status(), transfer.version()), Lane.ACCEPT, ON_ACCEPT);
                }
                return;
            }
            abandoned();
        }

        /** Gives a reserved slot back. */
        public void abandoned() {
            giveBack(slots);
            slots = 0;
        }
    }

    /** Fire and forget, in a slot {@link #admit} reserved for {@code lane}. */
    public void start(Seen seen, Lane lane, String why) {
        started.increment();
        run(seen, lane, why).subscribe().with(outcome -> { }, failure -> { });
    }

    /** Runs one pass in a slot {@link #admit} reserved for {@code lane}; the slot is free again when the pass ends. */
    Uni<TransferProcessor.Outcome> run(Seen seen, Lane lane, String why) {
        return inSlot(lane == Lane.ACCEPT ? processor.processJustAccepted(seen, why) : processor.process(seen, why), seen.id());
    }

    /** A pass of the transfer {@code id} in a reserved slot, freed when the pass ends. */
    private Uni<TransferProcessor.Outcome> inSlot(Uni<TransferProcessor.Outcome> pass, UUID id) {
        return pass
                .onFailure().invoke(e -> LOG.warnf("transferId=%s step=dispatch failed, the sweeper retries: %s", id, e.toString()))
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
