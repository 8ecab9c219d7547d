package dev.ledgerline.transfers.transfer;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import io.vertx.pgclient.PgException;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The fence batching: one batch in flight, the fences that waited meanwhile go together, two fences of one
 * transfer never share a statement, every caller hears about its own row only, and a batch the database
 * refused is written again one fence at a time, so one fence it cannot store fails only itself.
 */
class BatchQueueTest {

    private static final Duration WAIT = Duration.ofSeconds(5);

    /** A stand-in for the statement: records each batch and answers when the test says so. */
    private static final class Statement {
        final List<List<Fence>> batches = new ArrayList<>();
        final List<UniEmitter<? super Set<UUID>>> pending = new ArrayList<>();

        Uni<Set<UUID>> write(List<Fence> batch) {
            return Uni.createFrom().emitter(emitter -> {
                batches.add(List.copyOf(batch));
                pending.add(emitter);
            });
        }

        /** Answers the oldest open batch: every row written except {@code stale}. */
        void commit(UUID... stale) {
            List<Fence> batch = batches.get(batches.size() - pending.size());
            Set<UUID> written = new HashSet<>();
            batch.forEach(f -> written.add(f.id()));
            written.removeAll(Set.of(stale));
            pending.remove(0).complete(written);
        }

        /** The oldest open batch fails with {@code failure}. */
        void fail(Throwable failure) {
            pending.remove(0).fail(failure);
        }

        /** The fences of the latest batch, by id. */
        List<UUID> last() {
            return batches.get(batches.size() - 1).stream().map(Fence::id).toList();
        }
    }

    /** What PostgreSQL answers for a text value it cannot store: the statement, and all of its batch, rolled back. */
    private static PgException cannotStoreNul() {
        return new PgException("invalid byte sequence for encoding \"UTF8\": 0x00", "ERROR", "22021", null);
    }

    /** The queue as the repository builds it for fences: a fence hears whether its row was written. */
    private static BatchQueue<Fence, Set<UUID>, Boolean> fences(int maxBatch, Statement statement) {
        return new BatchQueue<>("fence", maxBatch, Fence::id, statement::write, (written, f) -> written.contains(f.id()));
    }

    private static BatchQueue<Fence, Set<UUID>, Boolean> fences(int maxBatch, Statement statement, long lingerMs, Timers timers) {
        return new BatchQueue<>("fence", maxBatch, Fence::id, statement::write, (written, f) -> written.contains(f.id()),
                lingerMs, timers);
    }

    private static Fence fence(UUID id, long version) {
        return new Fence(id, version, null, "sent", null, 0, "test", "provider completed", 0);
    }

    @Test
    void fencesThatWaitForTheBatchInFlightGoTogetherInTheNext() {
        Statement statement = new Statement();
        BatchQueue<Fence, Set<UUID>, Boolean> queue = fences(64, statement);
        UUID a = UUID.randomUUID(), b = UUID.randomUUID(), c = UUID.randomUUID();

        CompletableFuture<Boolean> first = queue.submit(fence(a, 1)).subscribeAsCompletionStage();
        CompletableFuture<Boolean> second = queue.submit(fence(b, 1)).subscribeAsCompletionStage();
        CompletableFuture<Boolean> third = queue.submit(fence(c, 3)).subscribeAsCompletionStage();
        assertEquals(1, statement.batches.size(), "one batch in flight: the others wait");
        assertEquals(List.of(a), statement.batches.get(0).stream().map(Fence::id).toList());

        statement.commit();
        assertTrue(first.join());
        assertEquals(2, statement.batches.size(), "the waiting fences leave as soon as the batch is answered");
        assertEquals(List.of(b, c), statement.batches.get(1).stream().map(Fence::id).toList());
        assertFalse(second.isDone(), "nobody is answered before their own statement");

        statement.commit(c);
        assertTrue(second.join(), "b's row was at its version");
        assertFalse(third.join(), "c's row had moved on: a stale fence hears false, and only c hears it");
    }

    @Test
    void twoFencesOfOneTransferNeverShareAStatement() {
        Statement statement = new Statement();
        BatchQueue<Fence, Set<UUID>, Boolean> queue = fences(64, statement);
        UUID other = UUID.randomUUID(), a = UUID.randomUUID();

        queue.submit(fence(other, 1)).subscribeAsCompletionStage();
        CompletableFuture<Boolean> mine = queue.submit(fence(a, 1)).subscribeAsCompletionStage();
        CompletableFuture<Boolean> again = queue.submit(fence(a, 1)).subscribeAsCompletionStage();
        statement.commit();

        assertEquals(List.of(a), statement.batches.get(1).stream().map(Fence::id).toList(),
                "the second fence of a waits for the next statement");
        statement.commit();
        assertTrue(mine.join());
        assertEquals(List.of(a), statement.batches.get(2).stream().map(Fence::id).toList());
        statement.commit(a);
        assertFalse(again.join(), "the repeat finds the row already moved on, and says so");
    }

    @Test
    void aBatchTheDatabaseRefusesIsRetriedOneFenceAtATimeSoAPoisonedFenceFailsOnlyItself() {
        Statement statement = new Statement();
        BatchQueue<Fence, Set<UUID>, Boolean> queue = fences(64, statement);
        UUID first = UUID.randomUUID(), a = UUID.randomUUID(), poisoned = UUID.randomUUID(), b = UUID.randomUUID(),
                stale = UUID.randomUUID(), later = UUID.randomUUID();

        queue.submit(fence(first, 1)).subscribeAsCompletionStage();
        CompletableFuture<Boolean> answerA = queue.submit(fence(a, 1)).subscribeAsCompletionStage();
        CompletableFuture<Boolean> answerPoisoned = queue.submit(fence(poisoned, 1)).subscribeAsCompletionStage();
        CompletableFuture<Boolean> answerB = queue.submit(fence(b, 1)).subscribeAsCompletionStage();
        CompletableFuture<Boolean> answerStale = queue.submit(fence(stale, 1)).subscribeAsCompletionStage();
        statement.commit();
        assertEquals(List.of(a, poisoned, b, stale), statement.last());

        statement.fail(cannotStoreNul());
        CompletableFuture<Boolean> answerLater = queue.submit(fence(later, 1)).subscribeAsCompletionStage();
        assertEquals(List.of(a), statement.last(), "the refused batch is written again, one fence per statement");
        assertFalse(answerA.isDone(), "nobody hears about the refused batch: it wrote nothing");
        statement.commit();
        assertTrue(answerA.join(), "a neighbour of the poisoned fence is written");

        assertEquals(List.of(poisoned), statement.last());
        statement.fail(cannotStoreNul());
        ExecutionException failed = assertThrows(ExecutionException.class, () -> answerPoisoned.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        assertInstanceOf(PgException.class, failed.getCause(), "the poisoned fence fails with the database's own answer");

        assertEquals(List.of(b), statement.last());
        statement.commit();
        assertTrue(answerB.join(), "every neighbour is written, the ones after the poisoned fence too");
        assertEquals(List.of(stale), statement.last());
        statement.commit(stale);
        assertFalse(answerStale.join(), "a stale fence in the retried batch still hears false");

        assertEquals(List.of(later), statement.last(), "fences asked for during the retries wait for them, then go");
        statement.commit();
        assertTrue(answerLater.join());
    }

    @Test
    void whenTheDatabaseStopsAnsweringDuringTheRetriesTheRestFailWithoutAStatementEach() {
        Statement statement = new Statement();
        BatchQueue<Fence, Set<UUID>, Boolean> queue = fences(64, statement);
        queue.submit(fence(UUID.randomUUID(), 1)).subscribeAsCompletionStage();
        List<CompletableFuture<Boolean>> answers = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            answers.add(queue.submit(fence(UUID.randomUUID(), 1)).subscribeAsCompletionStage());
        }
        statement.commit();
        statement.fail(cannotStoreNul());
        statement.commit();
        assertTrue(answers.get(0).join());

        statement.fail(new IllegalStateException("connection lost"));
        for (CompletableFuture<Boolean> answer : answers.subList(1, 4)) {
            assertThrows(ExecutionException.class, () -> answer.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        }
        assertEquals(4, statement.batches.size(),
                "an answer lost says nothing about one row: no statement for each of the others, they fail at once");
        UUID next = UUID.randomUUID();
        CompletableFuture<Boolean> after = queue.submit(fence(next, 1)).subscribeAsCompletionStage();
        assertEquals(List.of(next), statement.last(), "the queue goes on");
        statement.commit();
        assertTrue(after.join());
    }

    @Test
    void aBatchIsBoundedAndOneThatFailedWithoutTheDatabasesAnswerFailsEachOfItsFences() {
        Statement statement = new Statement();
        BatchQueue<Fence, Set<UUID>, Boolean> queue = fences(2, statement);
        List<CompletableFuture<Boolean>> answers = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            answers.add(queue.submit(fence(UUID.randomUUID(), 1)).subscribeAsCompletionStage());
        }
        statement.commit();
        assertEquals(2, statement.batches.get(1).size(), "at most maxBatch fences per statement");

        // a lost connection or a timeout: the batch may have committed, so it is not written again fence by fence
        statement.fail(new IllegalStateException("connection lost"));
        assertThrows(Exception.class, () -> answers.get(1).get(WAIT.toSeconds(), TimeUnit.SECONDS));
        assertThrows(Exception.class, () -> answers.get(2).get(WAIT.toSeconds(), TimeUnit.SECONDS));
        assertEquals(3, statement.batches.size(), "a failure does not stop the queue, and is not retried");
        statement.commit();
        assertTrue(answers.get(3).join());
    }

    /** The linger's timers, run when the test says so. */
    private static final class Timers implements BatchQueue.Delay {
        final List<Runnable> armed = new ArrayList<>();
        final List<Long> delays = new ArrayList<>();

        @Override
        public void after(long millis, Runnable task) {
            delays.add(millis);
            armed.add(task);
        }

        void fire() {
            armed.remove(0).run();
        }
    }

    @Test
    void aFenceCloseBehindAnotherWaitsOutTheLingerAndTakesWhatArrivedMeanwhile() {
        Statement statement = new Statement();
        Timers timers = new Timers();
        // a linger no test run outlasts: "within the linger" holds for every arrival below
        BatchQueue<Fence, Set<UUID>, Boolean> queue = fences(64, statement, 60_000, timers);
        UUID a = UUID.randomUUID(), b = UUID.randomUUID(), c = UUID.randomUUID();

        CompletableFuture<Boolean> first = queue.submit(fence(a, 1)).subscribeAsCompletionStage();
        assertEquals(List.of(a), statement.last(), "the first fence after a quiet spell goes at once");
        assertTrue(timers.armed.isEmpty());
        statement.commit();
        assertTrue(first.join());

        CompletableFuture<Boolean> second = queue.submit(fence(b, 1)).subscribeAsCompletionStage();
        CompletableFuture<Boolean> third = queue.submit(fence(c, 1)).subscribeAsCompletionStage();
        assertEquals(1, statement.batches.size(), "b came close behind a: it waits for company");
        assertEquals(List.of(60_000L), timers.delays, "one timer for the batch, not one per fence");

        timers.fire();
        assertEquals(List.of(b, c), statement.last(), "the lingering batch takes the fence that arrived meanwhile");
        statement.commit(c);
        assertTrue(second.join());
        assertFalse(third.join());
    }

    @Test
    void fencesQueuedBehindABatchInFlightDoNotLinger() {
        Statement statement = new Statement();
        Timers timers = new Timers();
        BatchQueue<Fence, Set<UUID>, Boolean> queue = fences(64, statement, 60_000, timers);
        UUID a = UUID.randomUUID(), b = UUID.randomUUID(), c = UUID.randomUUID();

        queue.submit(fence(a, 1)).subscribeAsCompletionStage();
        CompletableFuture<Boolean> second = queue.submit(fence(b, 1)).subscribeAsCompletionStage();
        queue.submit(fence(c, 1)).subscribeAsCompletionStage();
        statement.commit();

        assertEquals(List.of(b, c), statement.last(), "they go as soon as the batch in flight returns");
        assertTrue(timers.armed.isEmpty(), "the batch in flight was their company; no timer");
        statement.commit();
        assertTrue(second.join());
    }

    @Test
    void withoutALingerAFenceCloseBehindAnotherGoesAtOnce() {
        Statement statement = new Statement();
        Timers timers = new Timers();
        BatchQueue<Fence, Set<UUID>, Boolean> queue = fences(64, statement, 0, timers);
        UUID a = UUID.randomUUID(), b = UUID.randomUUID();

        queue.submit(fence(a, 1)).subscribeAsCompletionStage();
        statement.commit();
        queue.submit(fence(b, 1)).subscribeAsCompletionStage();

        assertEquals(List.of(b), statement.last());
        assertTrue(timers.armed.isEmpty());
    }
}
