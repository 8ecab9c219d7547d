package dev.ledgerline.transfers.transfer;

import io.smallrye.mutiny.Uni;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

/**
 * Whether rows exist, asked in batches with one batch in flight at a time, as {@link BatchQueue} sends fences: a
 * probe asked for while none is in flight goes at once, alone; the probes asked for meanwhile go together in the
 * next statement. A replay answered from a final idempotency entry checks its row this way: one statement per
 * replay cost PostgreSQL more than the replay cost the service (bench/CPU-AB.md), and a batch of sixteen ids costs
 * it about what two single probes do.
 *
 * <p>Every probe is answered by a read that started after it was asked: a batch is taken from the queue only when it
 * is sent. A batch that failed fails every probe in it, as its single statement would have.
 */
final class ProbeQueue {

    private final Queue<Waiting<UUID, Boolean>> waiting = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean inFlight = new AtomicBoolean();
    private final int maxBatch;
    /** Reads a batch of distinct ids and answers those that have a row. */
    private final Function<List<UUID>, Uni<Set<UUID>>> read;

    ProbeQueue(int maxBatch, Function<List<UUID>, Uni<Set<UUID>>> read) {
        this.maxBatch = maxBatch;
        this.read = read;
    }

    /** Whether the row of {@code id} exists, read after this call. */
    Uni<Boolean> exists(UUID id) {
        return Waiting.queue(waiting, id, this::next);
    }

    private void next() {
        if (!inFlight.compareAndSet(false, true)) {
            return;
        }
        List<Waiting<UUID, Boolean>> batch = new ArrayList<>();
        Set<UUID> ids = new LinkedHashSet<>();
        Waiting<UUID, Boolean> w;
        // up to maxBatch distinct ids; probes of an id already in the batch share its answer
        while (ids.size() < maxBatch && (w = waiting.poll()) != null) {
            batch.add(w);
            ids.add(w.item());
        }
        if (batch.isEmpty()) {
            inFlight.set(false);
            // a probe queued after the poll looked, but before the flag was down, would otherwise wait for the next one
            if (!waiting.isEmpty()) {
                next();
            }
            return;
        }
        Uni<Set<UUID>> reading;
        try {
            reading = read.apply(List.copyOf(ids));
        } catch (RuntimeException e) {
            reading = Uni.createFrom().failure(e);
        }
        reading.subscribe().with(existing -> {
            done();
            batch.forEach(x -> x.complete(existing.contains(x.item())));
        }, failure -> {
            done();
            batch.forEach(x -> x.fail(failure));
        });
    }

    private void done() {
        inFlight.set(false);
        next();
    }
}
