package dev.ledgerline.transfers.config;

import io.vertx.core.Context;
import io.vertx.core.Vertx;

import java.time.Duration;

/**
 * Deadlines that all have the same length, checked together by one periodic timer instead of one timer each: a Redis
 * command's timeout, a request body's deadline, a provider call's timeout. Arming a Vert.x timer and cancelling it registers it in Vert.x's map of
 * timers and in the event loop's queue of scheduled tasks and takes it out of both again: 4–5 % of a replay's samples
 * and of a new transfer's for the two kinds (bench/CPU-AB.md), for deadlines that nearly never expire. Since every
 * deadline here has the same length, the order they are armed in is the order they expire in: they wait in a list in
 * that order, a settled one is unlinked at once, and each tick expires those at the head whose time has come.
 *
 * <p>A deadline never expires early, and up to one tick late: the tick is a tenth of the length unless the owner picks
 * one (at least 1 ms), so a 250 ms timeout fires between 250 and about 275 ms. Its expiry runs on the Vert.x context that armed it, as a timer
 * of that context's would. Arming and settling take a lock that is held for a few pointer writes; any thread may do
 * either.
 */
public final class Deadlines {

    private final long lengthNanos;
    private final long periodicId;
    private final Vertx vertx;
    /** The oldest deadline still open, and the newest: a list in the order they were armed, hence of expiry. */
    private Deadline head;
    private Deadline tail;

    /** Checks the deadlines every tenth of {@code length} (at least every millisecond) until {@link #close}. */
    public Deadlines(Vertx vertx, Duration length) {
        this(vertx, length, length.dividedBy(10));
    }

    /** Checks the deadlines every {@code tick} (at least every millisecond) until {@link #close}: up to a tick late. */
    public Deadlines(Vertx vertx, Duration length, Duration tick) {
        this.vertx = vertx;
        this.lengthNanos = length.toNanos();
        this.periodicId = vertx.setPeriodic(Math.max(1, tick.toMillis()), id -> expire(System.nanoTime()));
    }

    /**
     * A deadline one length from now: {@code onExpiry} runs on the caller's context (if it has one) when the length has
     * passed and nobody {@linkplain Deadline#settle settled} it first.
     */
    public Deadline arm(Runnable onExpiry) {
        Deadline deadline = new Deadline(this, System.nanoTime() + lengthNanos, Vertx.currentContext(), onExpiry);
        synchronized (this) {
            if (tail == null) {
                head = deadline;
            } else {
                tail.next = deadline;
                deadline.previous = tail;
            }
            tail = deadline;
        }
        return deadline;
    }

    /** Stops checking: what is still armed never expires. */
    public void close() {
        vertx.cancelTimer(periodicId);
    }

    /** The deadlines armed and neither settled nor expired yet. */
    public synchronized int open() {
        int n = 0;
        for (Deadline d = head; d != null; d = d.next) {
            n++;
        }
        return n;
    }

    void expire(long now) {
        while (true) {
            Deadline due;
            synchronized (this) {
                due = head;
                if (due == null || due.at - now > 0) {
                    return;
                }
                unlink(due);
            }
            due.expire();
        }
    }

    /** Takes {@code d} out of the list; false when it was out already (settled or expired). Under the lock. */
    private boolean unlink(Deadline d) {
        if (d.unlinked) {
            return false;
        }
        d.unlinked = true;
        if (d.previous == null) {
            head = d.next;
        } else {
            d.previous.next = d.next;
        }
        if (d.next == null) {
            tail = d.previous;
        } else {
            d.next.previous = d.previous;
        }
        d.previous = null;
        d.next = null;
        return true;
    }

    /** One armed deadline: whoever comes first, {@link #settle} or the expiry, wins it. */
    public static final class Deadline {

        private final Deadlines owner;
        private final long at;
        private final Context context;
        private final Runnable onExpiry;
        private Deadline previous;
        private Deadline next;
        private boolean unlinked;

        private Deadline(Deadlines owner, long at, Context context, Runnable onExpiry) {
            this.owner = owner;
            this.at = at;
            this.context = context;
            this.onExpiry = onExpiry;
        }

        /** Settles it before it expires: true when this call did, false when it had expired or was settled already. */
        public boolean settle() {
            synchronized (owner) {
                return owner.unlink(this);
            }
        }

        private void expire() {
            if (context == null) {
                onExpiry.run();
            } else {
                context.runOnContext(ignored -> onExpiry.run());
            }
        }
    }
}
