package dev.ledgerline.transfers.config;

import dev.ledgerline.transfers.config.Deadlines.Deadline;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Deadlines of one length: never early, late by about a tick at most, on the arming context, settled ones gone. */
class DeadlinesTest {

    private final Vertx vertx = Vertx.vertx();

    @AfterEach
    void close() throws Exception {
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    @Test
    void aDeadlineExpiresAfterItsLengthOnTheContextThatArmedItAndNotOnceSettled() throws Exception {
        Deadlines deadlines = new Deadlines(vertx, Duration.ofMillis(200));
        Context context = vertx.getOrCreateContext();
        CompletableFuture<Long> expiredAfter = new CompletableFuture<>();
        CompletableFuture<Context> expiredOn = new CompletableFuture<>();
        AtomicInteger settledOnesExpired = new AtomicInteger();
        CompletableFuture<Deadline> settledLater = new CompletableFuture<>();
        context.runOnContext(ignored -> {
            long armedAt = System.nanoTime();
            deadlines.arm(() -> {
                expiredOn.complete(Vertx.currentContext());
                expiredAfter.complete((System.nanoTime() - armedAt) / 1_000_000);
            });
            Deadline settled = deadlines.arm(settledOnesExpired::incrementAndGet);
            assertTrue(settled.settle(), "settled before it expired");
            assertFalse(settled.settle(), "once");
            settledLater.complete(deadlines.arm(settledOnesExpired::incrementAndGet));
        });
        long after = expiredAfter.get(5, TimeUnit.SECONDS);
        assertTrue(after >= 200, "not before its length: " + after + " ms");
        assertTrue(after < 200 + 3 * 20 + 250, "about a tick (20 ms) late at most, on a loaded machine a little more: " + after);
        assertSame(context, expiredOn.get(5, TimeUnit.SECONDS), "on the context that armed it");
        Deadline late = settledLater.get(5, TimeUnit.SECONDS);
        // the expiry is taken off the list, then run on its context: wait for the run itself
        long until = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (settledOnesExpired.get() == 0 && System.nanoTime() < until) {
            Thread.sleep(10);
        }
        // both were armed on one context, the settled one first: had it expired, it would have run first
        assertEquals(1, settledOnesExpired.get(), "the settled one never expired; the other did");
        assertEquals(0, deadlines.open(), "every deadline is settled or expired");
        assertFalse(late.settle(), "a settle after the expiry loses");
        deadlines.close();
    }

    @Test
    void deadlinesArmedAndSettledFromManyThreadsLeaveNothingBehindAndTheRestExpireOnce() throws Exception {
        Deadlines deadlines = new Deadlines(vertx, Duration.ofMillis(300));
        int threads = 4;
        int each = 20_000;
        ConcurrentLinkedQueue<Integer> expired = new ConcurrentLinkedQueue<>();
        CountDownLatch done = new CountDownLatch(threads);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int thread = t;
            Thread worker = new Thread(() -> {
                for (int i = 0; i < each; i++) {
                    Deadline d = deadlines.arm(() -> expired.add(thread));
                    if (i % 1000 != 0) {
                        d.settle();
                    }
                }
                done.countDown();
            });
            workers.add(worker);
            worker.start();
        }
        assertTrue(done.await(30, TimeUnit.SECONDS));
        int kept = threads * (each / 1000);
        long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (expired.size() < kept && System.nanoTime() < until) {
            Thread.sleep(20);
        }
        assertEquals(kept, expired.size(), "each deadline not settled expired, once");
        assertEquals(0, deadlines.open());
        deadlines.close();
    }

    @Test
    void expiryIsOrderedByArmingAndStopsAtTheFirstNotDue() {
        Deadlines deadlines = new Deadlines(vertx, Duration.ofHours(1));
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            int n = i;
            deadlines.arm(() -> order.add(n));
        }
        deadlines.expire(System.nanoTime());
        assertEquals(List.of(), order, "an hour away: nothing due");
        assertEquals(5, deadlines.open());
        deadlines.expire(System.nanoTime() + Duration.ofHours(2).toNanos());
        assertEquals(List.of(0, 1, 2, 3, 4), order, "no context: run by the check itself, oldest first");
        assertEquals(0, deadlines.open());
        deadlines.close();
    }
}
