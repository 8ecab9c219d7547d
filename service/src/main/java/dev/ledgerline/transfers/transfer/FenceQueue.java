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
import java.util.concurrent.TimeUnit;
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
 * <p>Less CPU per transfer means less queues behind a batch in flight, so at a moderate rate most batches would hold
 * one fence. A fence that finds no batch in flight and arrived within {@code linger} of the fence before it
 * therefore waits that long for company before its batch goes, as PostgreSQL's {@code commit_delay} waits when
 * {@code commit_siblings} are active: the arrivals say more are coming. A fence after a quiet spell goes at once, so a
 * lightly loaded instance waits for nothing; fences queued behind a batch in flight go as soon as it returns, so a
 * busy one waits no longer than before.
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

    /** Runs a task after a delay, off the caller's stack: a Vert.x timer in the service. */
    interface Delay {
        void after(long millis, Runnable task);
    }

    private final Queue<Waiting<Fence, Boolean>> waiting = new ConcurrentLinkedQueue<>();
    /** A batch is being written, or is waiting out its linger before it is. */
    private final AtomicBoolean inFlight = new AtomicBoolean();
    private final int maxBatch;
    /** Writes a batch and answers the ids of the rows it wrote. */
    private final Function<List<Fence>, Uni<Set<UUID>>> write;
    private final long lingerMs;
    private final long lingerNanos;
    private final Delay delay;
    /** {@link System#nanoTime()} of the latest fence's arrival; races between callers only blur the estimate. */
    private volatile long lastArrival;

    /** Without a linger: a fence goes as soon as no batch is in flight. */
    FenceQueue(int maxBatch, Function<List<Fence>, Uni<Set<UUID>>> write) {
        this(maxBatch, write, 0, (millis, task) -> {
            throw new IllegalStateException("no linger configured");
        });
    }

    FenceQueue(int maxBatch, Function<List<Fence>, Uni<Set<UUID>>> write, long lingerMs, Delay delay) {
        this.maxBatch = maxBatch;
        this.write = write;
        this.lingerMs = lingerMs;
        this.lingerNanos = TimeUnit.MILLISECONDS.toNanos(lingerMs);
        this.delay = delay;
        this.lastArrival = System.nanoTime() - lingerNanos - 1;
    }

    /** {@code true} when the row was still at the fence's version and now carries its status. */
    Uni<Boolean> fence(Fence fence) {
        return Waiting.queue(waiting, fence, this::arrived);
    }

    private void arrived() {
        long now = System.nanoTime();
        boolean company = now - lastArrival <= lingerNanos;
        lastArrival = now;
        if (lingerMs > 0 && company) {
            if (inFlight.compareAndSet(false, true)) {
                linger();
            }
            return;
        }
        next();
    }

    /** Holds the in-flight flag for {@code linger}, then sends; at once if no timer can be set (Vert.x closing). */
    private void linger() {
        try {
            delay.after(lingerMs, this::send);
        } catch (RuntimeException e) {
            send();
        }
    }

    private void next() {
        if (inFlight.compareAndSet(false, true)) {
            send();
        }
    }

    /** Writes what waits, holding the in-flight flag. */
    private void send() {
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
