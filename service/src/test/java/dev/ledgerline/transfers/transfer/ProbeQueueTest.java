package dev.ledgerline.transfers.transfer;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
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
 * The batching of row probes: one statement in flight, the probes asked for meanwhile go together in the next one,
 * each id once; every caller hears about its own id, and a failed statement fails exactly the probes it carried.
 */
class ProbeQueueTest {

    private static final Duration WAIT = Duration.ofSeconds(5);

    /** A stand-in for the statement: records each batch and answers when the test says so. */
    private static final class Statement {
        final List<List<UUID>> batches = new ArrayList<>();
        final List<UniEmitter<? super Set<UUID>>> pending = new ArrayList<>();

        Uni<Set<UUID>> read(List<UUID> ids) {
            return Uni.createFrom().emitter(emitter -> {
                batches.add(List.copyOf(ids));
                pending.add(emitter);
            });
        }

        /** Answers the oldest open batch: these ids have a row. */
        void answer(UUID... existing) {
            pending.remove(0).complete(Set.of(existing));
        }
    }

    private final Statement statement = new Statement();
    private final ProbeQueue queue = new ProbeQueue(3, statement::read);

    @Test
    void theProbesAskedWhileOneIsInFlightGoTogetherInTheNextStatementEachIdOnce() throws Exception {
        UUID a = UUID.randomUUID();
        UUID b = UUID.randomUUID();
        UUID c = UUID.randomUUID();
        CompletableFuture<Boolean> first = ask(a);
        assertEquals(List.of(List.of(a)), statement.batches, "alone while nothing is in flight");

        CompletableFuture<Boolean> second = ask(b);
        CompletableFuture<Boolean> third = ask(c);
        CompletableFuture<Boolean> againB = ask(b);
        assertEquals(1, statement.batches.size(), "nothing more is sent while the first statement is in flight");
        assertFalse(second.isDone());

        statement.answer(a);
        assertTrue(first.get(5, TimeUnit.SECONDS));
        assertEquals(List.of(b, c), statement.batches.get(1), "the waiting probes in one statement, b once");

        statement.answer(c);
        assertFalse(second.get(5, TimeUnit.SECONDS), "b has no row");
        assertFalse(againB.get(5, TimeUnit.SECONDS), "the second probe of b shares its answer");
        assertTrue(third.get(5, TimeUnit.SECONDS));
        assertEquals(2, statement.batches.size());
    }

    @Test
    void aBatchCarriesAtMostItsBoundOfIdsAndTheRestGoNext() throws Exception {
        List<UUID> ids = new ArrayList<>();
        List<CompletableFuture<Boolean>> answers = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            ids.add(UUID.randomUUID());
            answers.add(ask(ids.get(i)));
        }
        statement.answer();
        assertEquals(ids.subList(1, 4), statement.batches.get(1));
        statement.answer(ids.get(1));
        assertEquals(ids.subList(4, 6), statement.batches.get(2));
        statement.answer(ids.get(5));
        List<Boolean> got = new ArrayList<>();
        for (CompletableFuture<Boolean> answer : answers) {
            got.add(answer.get(5, TimeUnit.SECONDS));
        }
        assertEquals(List.of(false, true, false, false, false, true), got);
    }

    @Test
    void aFailedStatementFailsTheProbesItCarriedAndTheNextOnesGoOn() throws Exception {
        UUID a = UUID.randomUUID();
        UUID b = UUID.randomUUID();
        CompletableFuture<Boolean> first = ask(a);
        statement.pending.remove(0).fail(new IllegalStateException("connection closed"));
        ExecutionException failed = assertThrows(ExecutionException.class, () -> first.get(5, TimeUnit.SECONDS));
        assertInstanceOf(IllegalStateException.class, failed.getCause());

        CompletableFuture<Boolean> next = ask(b);
        assertEquals(List.of(b), statement.batches.get(1), "the queue is free again after a failure");
        statement.answer(b);
        assertTrue(next.get(5, TimeUnit.SECONDS));
    }

    private CompletableFuture<Boolean> ask(UUID id) {
        return queue.exists(id).ifNoItem().after(WAIT).fail().subscribeAsCompletionStage();
    }
}
