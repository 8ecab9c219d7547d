package dev.ledgerline.transfers.transfer;

import io.smallrye.mutiny.Uni;
import io.vertx.sqlclient.DatabaseException;
import org.jboss.logging.Logger;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

/**
 * Fences leave this instance in batches, one batch in flight at a time: a fence asked for while none is in
 * flight goes at once, alone; the fences asked for meanwhile go together in the next statement. The fence to a
 * final status announces itself with pg_notify, and PostgreSQL commits notifying transactions one at a time, each
 * waiting for its own WAL flush (bench/FINDINGS.md, bench/DBCOST.md); a batch pays that flush once for all its
 * transfers. Under light load every batch holds one fence and nothing waits; under load the batches grow by
 * themselves, the way group commit does.
 *
 * <p>Each fence is still its own conditional write: the statement updates a row only where its (id, version)
 * still matches, and a caller learns whether its row was written. Two fences of one transfer never share a
 * batch (the second waits for the next), so each answer is about its own write.
 *
 * <p>One fence must not fail its neighbours. A batch the database refused (it answered with an error: a value it
 * cannot store, a deadlock with another instance's batch) wrote nothing, so its fences are written again one per
 * statement, in turn, while the queue holds the next batch back: a fence that cannot be written fails only
 * itself, the others are answered as usual. A batch that failed without the database's answer (a lost
 * connection, a timeout) may still have committed and says nothing about any one row: every fence in it fails,
 * as a single statement would, which every caller tolerates (the pipeline re-reads through its fenced UPDATEs);
 * a retry stops the same way, failing the fences not yet retried.
 */
final class FenceQueue {

    private static final Logger LOG = Logger.getLogger(FenceQueue.class);

    /**
     * One fence: write {@code status} over the row at {@code version} that still carries {@code claimToken}, with the
     * fields of its event.
     */
    record Fence(UUID id, long version, UUID claimToken, String status, String failureReason, long nextAttemptInMs,
                 String actor, String reason, int refused) {
    }

    private final Queue<Waiting<Fence, Boolean>> waiting = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean inFlight = new AtomicBoolean();
    private final int maxBatch;
    /** Writes a batch and answers the ids of the rows it wrote. */
    private final Function<List<Fence>, Uni<Set<UUID>>> write;

    FenceQueue(int maxBatch, Function<List<Fence>, Uni<Set<UUID>>> write) {
        this.maxBatch = maxBatch;
        this.write = write;
    }

    /** {@code true} when the row was still at the fence's version and now carries its status. */
    Uni<Boolean> fence(Fence fence) {
        return Waiting.queue(waiting, fence, this::next);
    }

    private void next() {
        if (!inFlight.compareAndSet(false, true)) {
            return;
        }
        List<Waiting<Fence, Boolean>> batch = take();
        if (batch.isEmpty()) {
            inFlight.set(false);
            // a fence queued after take() looked, but before the flag was down, would otherwise wait for the next one
            if (!waiting.isEmpty()) {
                next();
            }
            return;
        }
        List<Fence> fences = new ArrayList<>(batch.size());
        for (Waiting<Fence, Boolean> w : batch) {
            fences.add(w.item());
        }
        write(fences).subscribe().with(ids -> {
            done();
            batch.forEach(w -> w.complete(ids.contains(w.item().id())));
        }, failure -> {
            if (batch.size() > 1 && refusedByTheDatabase(failure)) {
                LOG.warnf("step=fence a batch of %d fences was refused (%s); writing them one at a time", batch.size(),
                        failure.toString());
                oneByOne(batch, 0);
                return;
            }
            done();
            batch.forEach(w -> w.fail(failure));
        });
    }

    /** Writes {@code batch} from {@code from} on, one fence per statement, answering each as its statement returns. */
    private void oneByOne(List<Waiting<Fence, Boolean>> batch, int from) {
        if (from == batch.size()) {
            done();
            return;
        }
        Waiting<Fence, Boolean> w = batch.get(from);
        write(List.of(w.item())).subscribe().with(ids -> {
            w.complete(ids.contains(w.item().id()));
            oneByOne(batch, from + 1);
        }, failure -> {
            if (refusedByTheDatabase(failure)) {
                LOG.warnf("transferId=%s version=%d step=fence refused: %s", w.item().id(), w.item().version(), failure.toString());
                w.fail(failure);
                oneByOne(batch, from + 1);
                return;
            }
            // the database stopped answering: one statement per remaining fence would only wait out its timeout
            done();
            batch.subList(from, batch.size()).forEach(left -> left.fail(failure));
        });
    }

    private Uni<Set<UUID>> write(List<Fence> fences) {
        try {
            return write.apply(fences);
        } catch (RuntimeException e) {
            return Uni.createFrom().failure(e);
        }
    }

    /** The database answered the statement with an error, so it rolled back: nothing of the batch was written. */
    private static boolean refusedByTheDatabase(Throwable failure) {
        for (Throwable e = failure; e != null; e = e.getCause()) {
            if (e instanceof DatabaseException) {
                return true;
            }
        }
        return false;
    }

    private void done() {
        inFlight.set(false);
        next();
    }

    /** Up to {@code maxBatch} waiting fences, at most one per transfer; the others stay queued. */
    private List<Waiting<Fence, Boolean>> take() {
        List<Waiting<Fence, Boolean>> batch = new ArrayList<>();
        List<Waiting<Fence, Boolean>> later = new ArrayList<>();
        Set<UUID> ids = new HashSet<>();
        Waiting<Fence, Boolean> w;
        while (batch.size() < maxBatch && (w = waiting.poll()) != null) {
            if (ids.add(w.item().id())) {
                batch.add(w);
            } else {
                later.add(w);
            }
        }
        waiting.addAll(later);
        return batch;
    }
}
