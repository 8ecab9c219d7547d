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
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * Conditional writes of rows that leave this instance in batches, one batch in flight at a time: a write asked for
 * while none is in flight goes at once, alone; the writes asked for meanwhile go together in the next statement. The
 * fences ({@link Fence}) go this way and the claims ({@link TransferRepository#claim}): PostgreSQL commits each statement
 * with its own WAL flush, and the fence to a final status announces itself with pg_notify, whose transactions commit
 * one at a time (bench/FINDINGS.md, bench/DBCOST.md); a batch pays its round trip, its commit and that flush once for
 * all its transfers. Under light load every batch holds one write and nothing waits; under load the batches grow by
 * themselves, the way group commit does.
 *
 * <p>Less CPU per transfer means less queues behind a batch in flight, so at a moderate rate most batches would hold
 * one write. A write that finds no batch in flight and arrived within {@code linger} of the write before it may
 * therefore wait that long for company before its batch goes, as PostgreSQL's {@code commit_delay} waits when
 * {@code commit_siblings} are active: the arrivals say more are coming. A write after a quiet spell goes at once, so a
 * lightly loaded instance waits for nothing; writes queued behind a batch in flight go as soon as it returns, so a
 * busy one waits no longer than before. (The fences linger; the claims do not, as a claim's wait delays its send.)
 *
 * <p>Each write is still its own conditional write: the statement updates a row only where its own conditions hold
 * (for a fence its id, version and claim token, for a claim the status and version its caller saw), and a caller
 * learns about its own row only ({@code answer}). Two writes of one transfer never share a batch (the second waits for
 * the next), so each answer is about its own write.
 *
 * <p>One write must not fail its neighbours. A batch the database refused (it answered with an error: a value it
 * cannot store, a deadlock with another instance's batch) wrote nothing, so its writes are sent again one per
 * statement, in turn, while the queue holds the next batch back: a write that cannot be stored fails only itself,
 * the others are answered as usual. A batch that failed without the database's answer (a lost connection, a timeout)
 * may still have committed and says nothing about any one row: every write in it fails, as a single statement would,
 * which every caller tolerates (the pipeline re-reads through its fenced UPDATEs); a retry stops the same way,
 * failing the writes not yet retried.
 *
 * @param <T> one write
 * @param <A> what the statement answers for a batch
 * @param <R> what one write's caller hears
 */
final class BatchQueue<T, A, R> {

    private static final Logger LOG = Logger.getLogger(BatchQueue.class);

    /** Runs a task after a delay, off the caller's stack: a Vert.x timer in the service. */
    interface Delay {
        void after(long millis, Runnable task);
    }

    private final Queue<Waiting<T, R>> waiting = new ConcurrentLinkedQueue<>();
    /** A batch is being written, or is waiting out its linger before it is. */
    private final AtomicBoolean inFlight = new AtomicBoolean();
    /** The log's {@code step=} of a write: {@code fence}, {@code claim}. */
    private final String step;
    private final int maxBatch;
    /** The transfer a write is about: no two of one transfer share a batch. */
    private final Function<T, UUID> idOf;
    /** Writes a batch. */
    private final Function<List<T>, Uni<A>> write;
    /** What the batch's answer says of one write of it. */
    private final BiFunction<A, T, R> answer;
    private final long lingerMs;
    private final long lingerNanos;
    private final Delay delay;
    /** {@link System#nanoTime()} of the latest write's arrival; races between callers only blur the estimate. */
    private volatile long lastArrival;

    /** Without a linger: a write goes as soon as no batch is in flight. */
    BatchQueue(String step, int maxBatch, Function<T, UUID> idOf, Function<List<T>, Uni<A>> write, BiFunction<A, T, R> answer) {
        this(step, maxBatch, idOf, write, answer, 0, (millis, task) -> {
            throw new IllegalStateException("no linger configured");
        });
    }

    BatchQueue(String step, int maxBatch, Function<T, UUID> idOf, Function<List<T>, Uni<A>> write, BiFunction<A, T, R> answer,
               long lingerMs, Delay delay) {
        this.step = step;
        this.maxBatch = maxBatch;
        this.idOf = idOf;
        this.write = write;
        this.answer = answer;
        this.lingerMs = lingerMs;
        this.lingerNanos = TimeUnit.MILLISECONDS.toNanos(lingerMs);
        this.delay = delay;
        this.lastArrival = System.nanoTime() - lingerNanos - 1;
    }

    /** What the statement that carried {@code item} says of its row. */
    Uni<R> submit(T item) {
        return Waiting.queue(waiting, item, this::arrived);
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
        List<Waiting<T, R>> batch = take();
        if (batch.isEmpty()) {
            inFlight.set(false);
            // a write queued after take() looked, but before the flag was down, would otherwise wait for the next one
            if (!waiting.isEmpty()) {
                next();
            }
            return;
        }
        List<T> items = new ArrayList<>(batch.size());
        for (Waiting<T, R> w : batch) {
            items.add(w.item());
        }
        write(items).subscribe().with(answered -> {
            done();
            batch.forEach(w -> w.complete(answer.apply(answered, w.item())));
        }, failure -> {
            if (batch.size() > 1 && refusedByTheDatabase(failure)) {
                LOG.warnf("step=%s a batch of %d was refused (%s); writing them one at a time", step, batch.size(),
                        failure.toString());
                oneByOne(batch, 0);
                return;
            }
            done();
            batch.forEach(w -> w.fail(failure));
        });
    }

    /** Writes {@code batch} from {@code from} on, one write per statement, answering each as its statement returns. */
    private void oneByOne(List<Waiting<T, R>> batch, int from) {
        if (from == batch.size()) {
            done();
            return;
        }
        Waiting<T, R> w = batch.get(from);
        write(List.of(w.item())).subscribe().with(answered -> {
            w.complete(answer.apply(answered, w.item()));
            oneByOne(batch, from + 1);
        }, failure -> {
            if (refusedByTheDatabase(failure)) {
                LOG.warnf("transferId=%s step=%s refused: %s", idOf.apply(w.item()), step, failure.toString());
                w.fail(failure);
                oneByOne(batch, from + 1);
                return;
            }
            // the database stopped answering: one statement per remaining write would only wait out its timeout
            done();
            batch.subList(from, batch.size()).forEach(left -> left.fail(failure));
        });
    }

    private Uni<A> write(List<T> items) {
        try {
            return write.apply(items);
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

    /** Up to {@code maxBatch} waiting writes, at most one per transfer; the others stay queued. */
    private List<Waiting<T, R>> take() {
        List<Waiting<T, R>> batch = new ArrayList<>();
        List<Waiting<T, R>> later = new ArrayList<>();
        Set<UUID> ids = new HashSet<>();
        Waiting<T, R> w;
        while (batch.size() < maxBatch && (w = waiting.poll()) != null) {
            if (ids.add(idOf.apply(w.item()))) {
                batch.add(w);
            } else {
                later.add(w);
            }
        }
        waiting.addAll(later);
        return batch;
    }
}
