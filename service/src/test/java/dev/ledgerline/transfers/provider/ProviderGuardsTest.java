package dev.ledgerline.transfers.provider;

import dev.ledgerline.transfers.config.Breaker;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;
import io.smallrye.mutiny.subscription.UniEmitter;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The provider calls' guards on a real Vert.x event loop, with operations the test holds and completes: the timeout,
 * the bulkhead and the breaker, each as a caller sees it, and what is left running or waiting afterwards.
 */
class ProviderGuardsTest {

    private static final long DELAY_NANOS = TimeUnit.MILLISECONDS.toNanos(300);

    private final Vertx vertx = Vertx.vertx();
    private final List<ProviderGuards.Guard> guards = new ArrayList<>();

    @AfterEach
    void close() {
        guards.forEach(ProviderGuards.Guard::close);
        vertx.close().toCompletionStage().toCompletableFuture().join();
    }

    private ProviderGuards.Guard guard(Breaker breaker, Duration timeout, int maxConcurrent, int waitingQueue) {
        ProviderGuards.Guard guard = new ProviderGuards.Guard("provider-test", vertx, breaker, timeout, maxConcurrent, waitingQueue);
        guards.add(guard);
        return guard;
    }

    private static Breaker lenientBreaker() {
        return new Breaker(1000, 1.0, DELAY_NANOS, 1);
    }

    @Test
    void aCallHeldPastItsTimeoutIsReleasedOnItsLoopOnTimeAndItsRequestCancelled() throws Exception {
        ProviderGuards.Guard guard = guard(lenientBreaker(), Duration.ofMillis(300), 4, 4);
        AtomicBoolean cancelled = new AtomicBoolean();
        Context loop = vertx.getOrCreateContext();
        CompletableFuture<Thread> caller = new CompletableFuture<>();
        CompletableFuture<Outcome> outcome = new CompletableFuture<>();
        loop.runOnContext(ignored -> {
            caller.complete(Thread.currentThread());
            long begun = System.nanoTime();
            guard.call(() -> Uni.createFrom().emitter(held -> held.onTermination(() -> cancelled.set(true))))
                    .subscribe().with(item -> outcome.complete(new Outcome(null, System.nanoTime() - begun)),
                            failure -> outcome.complete(new Outcome(failure, System.nanoTime() - begun)));
        });
        Outcome result = outcome.get(5, TimeUnit.SECONDS);
        assertInstanceOf(ProviderUnknownOutcomeException.class, result.failure(), "a timeout is unknown");
        assertTrue(result.failure().getMessage().contains("within 300 ms"), result.failure().getMessage());
        long ms = TimeUnit.NANOSECONDS.toMillis(result.nanos());
        assertTrue(ms >= 300 && ms < 300 + 250, "released after " + ms + " ms");
        assertEquals(caller.get(), result.thread(), "released on the loop the call was made on");
        assertTrue(cancelled.get(), "the held request was cancelled (ProviderHttp resets it)");
        assertArrayEquals(new int[] {0, 0}, guard.occupancy(), "nothing left running or waiting");
    }

    @Test
    void theBulkheadRunsMaxAtOnceQueuesTheNextInOrderOnTheirLoopsAndRefusesOneMore() throws Exception {
        ProviderGuards.Guard guard = guard(lenientBreaker(), Duration.ofSeconds(30), 2, 2);
        Held ops = new Held();
        Context first = vertx.getOrCreateContext();
        Context second = vertx.getOrCreateContext();
        List<CompletableFuture<Outcome>> outcomes = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            outcomes.add(new CompletableFuture<>());
        }
        CompletableFuture<Thread> secondThread = new CompletableFuture<>();
        CompletableFuture<Void> made = new CompletableFuture<>();
        first.runOnContext(ignored -> {
            subscribe(guard.call(ops.next("a")), outcomes.get(0));
            subscribe(guard.call(ops.next("b")), outcomes.get(1));
            second.runOnContext(v -> {
                secondThread.complete(Thread.currentThread());
                subscribe(guard.call(ops.next("c")), outcomes.get(2)); // waits, first in line
                first.runOnContext(w -> {
                    subscribe(guard.call(ops.next("d")), outcomes.get(3)); // waits, second in line
                    subscribe(guard.call(ops.next("e")), outcomes.get(4)); // one more: refused
                    made.complete(null);
                });
            });
        });
        made.get(5, TimeUnit.SECONDS);
        Outcome refused = outcomes.get(4).get(5, TimeUnit.SECONDS);
        assertInstanceOf(ProviderUnknownOutcomeException.class, refused.failure());
        assertTrue(refused.failure().getMessage().contains("bulkhead is full"), refused.failure().getMessage());
        assertEquals(List.of("a", "b"), ops.started(), "two run, the rest wait");
        assertArrayEquals(new int[] {2, 2}, guard.occupancy());

        ops.complete("a");
        assertEquals("a", outcomes.get(0).get(5, TimeUnit.SECONDS).item());
        awaitStarted(ops, 3);
        assertEquals(List.of("a", "b", "c"), ops.started(), "the longest waiting goes next");
        assertEquals(secondThread.get(), ops.startedOn("c"), "and starts on the loop it was made on");
        ops.complete("b");
        awaitStarted(ops, 4);
        assertEquals("d", ops.started().get(3));
        ops.complete("c");
        ops.complete("d");
        assertEquals("d", outcomes.get(3).get(5, TimeUnit.SECONDS).item());
        assertEquals("c", outcomes.get(2).get(5, TimeUnit.SECONDS).item());
        assertArrayEquals(new int[] {0, 0}, guard.occupancy());
    }

    @Test
    void aCallWhoseTimeoutExpiresWhileItWaitsNeverStarts() throws Exception {
        ProviderGuards.Guard guard = guard(lenientBreaker(), Duration.ofMillis(300), 1, 4);
        Held ops = new Held();
        Context loop = vertx.getOrCreateContext();
        CompletableFuture<Outcome> running = new CompletableFuture<>();
        CompletableFuture<Outcome> waiting = new CompletableFuture<>();
        loop.runOnContext(ignored -> {
            subscribe(guard.call(ops.next("running")), running);
            subscribe(guard.call(ops.next("waiting")), waiting);
        });
        assertInstanceOf(ProviderUnknownOutcomeException.class, running.get(5, TimeUnit.SECONDS).failure());
        assertInstanceOf(ProviderUnknownOutcomeException.class, waiting.get(5, TimeUnit.SECONDS).failure(),
                "its wait for a turn counts against its timeout");
        Thread.sleep(100); // a start handed to the loop would have run by now
        assertEquals(List.of("running"), ops.started(), "the one that timed out waiting was never made");
        assertArrayEquals(new int[] {0, 0}, guard.occupancy());
    }

    @Test
    void theBreakerOpensOnFailuresRefusesWithoutCallingAndClosesAfterItsTrials() throws Exception {
        Breaker breaker = new Breaker(4, 0.5, DELAY_NANOS, 2);
        ProviderGuards.Guard guard = guard(breaker, Duration.ofSeconds(30), 8, 8);
        AtomicInteger made = new AtomicInteger();
        Supplier<Uni<String>> failing = () -> {
            made.incrementAndGet();
            return Uni.createFrom().failure(new ProviderUnknownOutcomeException("provider answered 503 to a send"));
        };
        for (int i = 0; i < 4; i++) {
            assertInstanceOf(ProviderUnknownOutcomeException.class, await(guard.call(failing)).failure());
        }
        assertEquals(Breaker.State.OPEN, breaker.state());
        Outcome refused = await(guard.call(failing));
        assertTrue(refused.failure().getMessage().contains("circuit breaker is open"), refused.failure().getMessage());
        assertEquals(4, made.get(), "an open breaker does not call the provider");

        Thread.sleep(TimeUnit.NANOSECONDS.toMillis(DELAY_NANOS) + 50);
        Held ops = new Held();
        CompletableFuture<Outcome> trial1 = new CompletableFuture<>();
        CompletableFuture<Outcome> trial2 = new CompletableFuture<>();
        subscribe(guard.call(ops.next("t1")), trial1);
        subscribe(guard.call(ops.next("t2")), trial2);
        assertEquals(Breaker.State.HALF_OPEN, breaker.state());
        assertTrue(await(guard.call(ops.next("t3"))).failure().getMessage().contains("circuit breaker is open"),
                "half-open: two trials, no third");
        ops.complete("t1");
        assertEquals("t1", trial1.get(5, TimeUnit.SECONDS).item());
        assertEquals(Breaker.State.HALF_OPEN, breaker.state(), "one success of the two it needs");
        ops.complete("t2");
        assertEquals("t2", trial2.get(5, TimeUnit.SECONDS).item());
        assertEquals(Breaker.State.CLOSED, breaker.state());
        assertEquals(List.of("t1", "t2"), ops.started());
    }

    @Test
    void aCallerThatCancelsFreesItsTurnAndIsNoVerdictOnTheProvider() throws Exception {
        Breaker breaker = new Breaker(1, 1.0, DELAY_NANOS, 1); // a single failure would open it
        ProviderGuards.Guard guard = guard(breaker, Duration.ofSeconds(30), 1, 0);
        AtomicBoolean cancelled = new AtomicBoolean();
        Cancellable subscription = guard.call(() -> Uni.createFrom().<String>emitter(
                        held -> held.onTermination(() -> cancelled.set(true))))
                .subscribe().with(item -> { }, failure -> { });
        assertArrayEquals(new int[] {1, 0}, guard.occupancy());
        subscription.cancel();
        assertTrue(cancelled.get(), "the running request is cancelled with its caller");
        assertArrayEquals(new int[] {0, 0}, guard.occupancy(), "its turn is free");
        assertEquals(Breaker.State.CLOSED, breaker.state(), "not counted");
        for (int i = 0; i < 1000; i++) {
            assertEquals("v", await(guard.call(() -> Uni.createFrom().item("v"))).item());
        }
        assertArrayEquals(new int[] {0, 0}, guard.occupancy(), "calls that complete at once each leave their turn once");
    }

    private static <T> void subscribe(Uni<T> uni, CompletableFuture<Outcome> outcome) {
        uni.subscribe().with(item -> outcome.complete(new Outcome(item, null, 0)),
                failure -> outcome.complete(new Outcome(null, failure, 0)));
    }

    private static <T> Outcome await(Uni<T> uni) throws Exception {
        CompletableFuture<Outcome> outcome = new CompletableFuture<>();
        subscribe(uni, outcome);
        return outcome.get(5, TimeUnit.SECONDS);
    }

    private static void awaitStarted(Held ops, int count) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (ops.started().size() < count && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertEquals(count, ops.started().size(), "started: " + ops.started());
    }

    /** Operations that start when the guard makes them and complete when the test says so. */
    private static final class Held {
        private final List<String> started = new CopyOnWriteArrayList<>();
        private final Map<String, Thread> threads = new ConcurrentHashMap<>();
        private final Map<String, UniEmitter<? super String>> emitters = new ConcurrentHashMap<>();

        Supplier<Uni<String>> next(String name) {
            return () -> Uni.createFrom().emitter(emitter -> {
                emitters.put(name, emitter);
                threads.put(name, Thread.currentThread());
                started.add(name);
            });
        }

        List<String> started() {
            return List.copyOf(started);
        }

        Thread startedOn(String name) {
            return threads.get(name);
        }

        void complete(String name) {
            emitters.get(name).complete(name);
        }
    }

    private record Outcome(Object item, Throwable failure, long nanos, Thread thread) {
        Outcome(Object item, Throwable failure, long nanos) {
            this(item, failure, nanos, Thread.currentThread());
        }

        Outcome(Throwable failure, long nanos) {
            this(null, failure, nanos, Thread.currentThread());
        }
    }
}
