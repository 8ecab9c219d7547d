package dev.ledgerline.transfers.config;

import dev.ledgerline.transfers.provider.PaymentOrder;
import dev.ledgerline.transfers.provider.PaymentProvider;
import dev.ledgerline.transfers.support.Sandbox;
import dev.ledgerline.transfers.support.TestStack;
import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.faulttolerance.ExecutorHolder;
import io.smallrye.faulttolerance.core.timer.ThreadTimer;
import io.smallrye.faulttolerance.core.timer.Timer;
import io.smallrye.faulttolerance.core.timer.TimerTask;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import jakarta.inject.Inject;
import org.eclipse.microprofile.faulttolerance.exceptions.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The provider calls' {@code @Timeout} (test profile: 1 s) against a provider that holds every send for 3 s: set on an
 * event loop, the timeout waits in that loop's queue and releases the caller on that loop, on time; set on any other
 * thread, it waits in the library's timer, as before.
 */
@QuarkusTest
class LoopTimersTest {

    private static final long TIMEOUT_MS = 1000;

    @Inject
    PaymentProvider provider;

    @Inject
    ExecutorHolder executors;

    @Inject
    Vertx vertx;

    @AfterEach
    void healthyProvider() {
        Sandbox.reset();
        TestStack.closeBreakers();
    }

    @Test
    void aTimeoutSetOnAnEventLoopWaitsOnThatLoopAndReleasesTheCallerThereOnTime() throws Exception {
        LoopTimers timers = assertInstanceOf(LoopTimers.class, executors, "the fault tolerance's executors");
        Sandbox.faults(Map.of("holdMs", 3000, "holdRate", 1.0));
        Context loop = vertx.getOrCreateContext();
        assertTrue(loop.isEventLoopContext());
        CompletableFuture<Thread> started = new CompletableFuture<>();
        CompletableFuture<Outcome> outcome = new CompletableFuture<>();
        loop.runOnContext(ignored -> {
            long begun = System.nanoTime();
            started.complete(Thread.currentThread());
            provider.send(order()).subscribe().with(
                    item -> outcome.complete(new Outcome(null, Thread.currentThread(), System.nanoTime() - begun)),
                    failure -> outcome.complete(new Outcome(failure, Thread.currentThread(), System.nanoTime() - begun)));
        });
        Thread loopThread = started.get(2, TimeUnit.SECONDS);

        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
        while (timers.getTimer().countScheduledTasks() == 0 && System.nanoTime() < deadline && !outcome.isDone()) {
            Thread.sleep(5);
        }
        assertFalse(outcome.isDone(), "the send is held at the provider");
        assertTrue(timers.getTimer().countScheduledTasks() - timers.library().countScheduledTasks() >= 1,
                "the send's timeout pending on a loop");
        assertEquals(0, timers.library().countScheduledTasks(), "none of it in the library's timer thread");

        Outcome result = outcome.get(5, TimeUnit.SECONDS);
        assertInstanceOf(TimeoutException.class, result.failure(), "released by the timeout");
        assertEquals(loopThread, result.thread(), "released on the loop it started on");
        long ms = TimeUnit.NANOSECONDS.toMillis(result.nanos());
        assertTrue(ms >= TIMEOUT_MS && ms < TIMEOUT_MS + 1000, "released after " + ms + " ms");
    }

    @Test
    void aTimeoutSetOffTheLoopsWaitsInTheLibrarysTimer() throws Exception {
        LoopTimers timers = assertInstanceOf(LoopTimers.class, executors);
        Sandbox.faults(Map.of("holdMs", 3000, "holdRate", 1.0));
        long begun = System.nanoTime();
        CompletableFuture<Throwable> failure = new CompletableFuture<>();
        provider.send(order()).subscribe().with(item -> failure.complete(null), failure::complete);

        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
        while (timers.library().countScheduledTasks() == 0 && System.nanoTime() < deadline && !failure.isDone()) {
            Thread.sleep(5);
        }
        assertTrue(timers.library().countScheduledTasks() >= 1, "the pending timeout is the library's");
        assertInstanceOf(TimeoutException.class, failure.get(5, TimeUnit.SECONDS));
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - begun);
        assertTrue(ms >= TIMEOUT_MS && ms < TIMEOUT_MS + 1000, "released after " + ms + " ms");
    }

    @Test
    void aTaskCancelledOnItsLoopNeverRunsAndOneNotCancelledRunsThere() throws Exception {
        ThreadTimer library = new ThreadTimer(Runnable::run);
        Timer timer = new LoopTimers.OnLoop(library, Runnable::run);
        try {
            Context loop = vertx.getOrCreateContext();
            AtomicBoolean cancelledRan = new AtomicBoolean();
            CompletableFuture<Integer> pendingAfterCancel = new CompletableFuture<>();
            CompletableFuture<Boolean> cancelled = new CompletableFuture<>();
            CompletableFuture<Thread> ranOn = new CompletableFuture<>();
            CompletableFuture<Thread> scheduledOn = new CompletableFuture<>();
            loop.runOnContext(ignored -> {
                scheduledOn.complete(Thread.currentThread());
                TimerTask doomed = timer.schedule(50, () -> cancelledRan.set(true), Runnable::run);
                timer.schedule(100, () -> ranOn.complete(Thread.currentThread()), Runnable::run);
                cancelled.complete(doomed.cancel() && doomed.isDone());
                pendingAfterCancel.complete(timer.countScheduledTasks());
            });
            assertTrue(cancelled.get(2, TimeUnit.SECONDS), "cancelled before its time");
            assertEquals(1, pendingAfterCancel.get(), "the other still pending");
            assertEquals(scheduledOn.get(), ranOn.get(2, TimeUnit.SECONDS), "the other ran on the loop that set it");
            assertFalse(cancelledRan.get(), "the cancelled one never ran");
            assertEquals(0, timer.countScheduledTasks(), "nothing pending");
            assertEquals(0, library.countScheduledTasks(), "nothing went to the library's timer");
        } finally {
            library.shutdown();
        }
    }

    private static PaymentOrder order() {
        return new PaymentOrder("loop-timer-" + UUID.randomUUID(), 1250, "EUR", "DE89370400440532013000", "Ada Lovelace",
                Instant.now().plusSeconds(30));
    }

    private record Outcome(Throwable failure, Thread thread, long nanos) {
    }
}
