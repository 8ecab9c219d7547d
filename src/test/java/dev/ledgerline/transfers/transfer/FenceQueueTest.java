package dev.ledgerline.transfers.transfer;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The fence batching: one batch in flight, the fences that waited meanwhile go together, two fences of one
 * transfer never share a statement, and every caller hears about its own row only.
 */
class FenceQueueTest {

    private static final Duration WAIT = Duration.ofSeconds(5);

    /** A stand-in for the statement: records each batch and answers when the test says so. */
    private static final class Statement {
        final List<List<FenceQueue.Fence>> batches = new ArrayList<>();
        final List<UniEmitter<? super Set<UUID>>> pending = new ArrayList<>();

        Uni<Set<UUID>> write(List<FenceQueue.Fence> batch) {
            return Uni.createFrom().emitter(emitter -> {
                batches.add(List.copyOf(batch));
                pending.add(emitter);
            });
        }

        /** Answers the oldest open batch: every row written except {@code stale}. */
        void commit(UUID... stale) {
            List<FenceQueue.Fence> batch = batches.get(batches.size() - pending.size());
            Set<UUID> written = new HashSet<>();
            batch.forEach(f -> written.add(f.id()));
            written.removeAll(Set.of(stale));
            pending.remove(0).complete(written);
        }
    }

    private static FenceQueue.Fence fence(UUID id, long version) {
        return new FenceQueue.Fence(id, version, "sent", null, 0, "test", "provider completed", 0);
    }

    @Test
    void fencesThatWaitForTheBatchInFlightGoTogetherInTheNext() {
        Statement statement = new Statement();
        FenceQueue queue = new FenceQueue(64, statement::write);
        UUID a = UUID.randomUUID(), b = UUID.randomUUID(), c = UUID.randomUUID();

        CompletableFuture<Boolean> first = queue.fence(fence(a, 1)).subscribeAsCompletionStage();
        CompletableFuture<Boolean> second = queue.fence(fence(b, 1)).subscribeAsCompletionStage();
        CompletableFuture<Boolean> third = queue.fence(fence(c, 3)).subscribeAsCompletionStage();
        assertEquals(1, statement.batches.size(), "one batch in flight: the others wait");
        assertEquals(List.of(a), statement.batches.get(0).stream().map(FenceQueue.Fence::id).toList());

        statement.commit();
        assertTrue(first.join());
        assertEquals(2, statement.batches.size(), "the waiting fences leave as soon as the batch is answered");
        assertEquals(List.of(b, c), statement.batches.get(1).stream().map(FenceQueue.Fence::id).toList());
        assertFalse(second.isDone(), "nobody is answered before their own statement");

        statement.commit(c);
        assertTrue(second.join(), "b's row was at its version");
        assertFalse(third.join(), "c's row had moved on: a stale fence hears false, and only c hears it");
    }

    @Test
    void twoFencesOfOneTransferNeverShareAStatement() {
        Statement statement = new Statement();
        FenceQueue queue = new FenceQueue(64, statement::write);
        UUID other = UUID.randomUUID(), a = UUID.randomUUID();

        queue.fence(fence(other, 1)).subscribeAsCompletionStage();
        CompletableFuture<Boolean> mine = queue.fence(fence(a, 1)).subscribeAsCompletionStage();
        CompletableFuture<Boolean> again = queue.fence(fence(a, 1)).subscribeAsCompletionStage();
        statement.commit();

        assertEquals(List.of(a), statement.batches.get(1).stream().map(FenceQueue.Fence::id).toList(),
                "the second fence of a waits for the next statement");
        statement.commit();
        assertTrue(mine.join());
        assertEquals(List.of(a), statement.batches.get(2).stream().map(FenceQueue.Fence::id).toList());
        statement.commit(a);
        assertFalse(again.join(), "the repeat finds the row already moved on, and says so");
    }

    @Test
    void aBatchIsBoundedAndAFailedOneFailsEachOfItsFencesOnly() {
        Statement statement = new Statement();
        FenceQueue queue = new FenceQueue(2, statement::write);
        List<CompletableFuture<Boolean>> answers = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            answers.add(queue.fence(fence(UUID.randomUUID(), 1)).subscribeAsCompletionStage());
        }
        statement.commit();
        assertEquals(2, statement.batches.get(1).size(), "at most maxBatch fences per statement");

        statement.pending.remove(0).fail(new IllegalStateException("connection lost"));
        assertThrows(Exception.class, () -> answers.get(1).get(WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS));
        assertThrows(Exception.class, () -> answers.get(2).get(WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS));
        assertEquals(3, statement.batches.size(), "a failure does not stop the queue");
        statement.commit();
        assertTrue(answers.get(3).join());
    }
}
