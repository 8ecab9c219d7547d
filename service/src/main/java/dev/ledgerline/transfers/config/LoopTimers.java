package dev.ledgerline.transfers.config;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import io.netty.util.internal.ThreadExecutorMap;
import io.smallrye.faulttolerance.AsyncExecutorProvider;
import io.smallrye.faulttolerance.ExecutorHolder;
import io.smallrye.faulttolerance.core.timer.Timer;
import io.smallrye.faulttolerance.core.timer.TimerTask;
import jakarta.annotation.Priority;
import jakarta.enterprise.inject.Alternative;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * SmallRye Fault Tolerance's executors with one change: its timer keeps a timeout that is set on an event loop in that
 * loop's own queue of scheduled tasks. The library's timer is a thread of its own that every {@code schedule} unparks,
 * so each provider call under {@code @Timeout} woke that thread only for it to note a deadline and park again (2.7
 * {@code futex} calls and one or two context switches per new transfer), and the call's end cancelled the task in a
 * queue that every loop shares (bench/CPU-AB.md, "Timeouts on the loop"). On its loop, a task is added and cancelled by
 * the loop itself, with no other thread involved.
 *
 * <p>Nothing else changes: the same {@code Timeout} strategy arms the timer, runs outside the bulkhead (a queued call's
 * wait counts) and inside the circuit breaker (a timeout is a failure the breaker counts), and on expiry completes the
 * call with {@code TimeoutException} through the executor it was given, the caller's Vert.x context. A timeout set on
 * any other thread, or once the loop is shutting down, goes to the library's timer as before.
 *
 * <p>The class replaces the library's bean of the same type ({@code @Alternative} with a priority), which the fault
 * tolerance interceptor and its metrics ask for.
 */
@Alternative
@Priority(1)
@Singleton
public class LoopTimers extends ExecutorHolder {

    private final Timer timer;

    @Inject
    public LoopTimers(AsyncExecutorProvider asyncExecutorProvider) {
        super(asyncExecutorProvider);
        this.timer = new OnLoop(super.getTimer(), getAsyncExecutor());
    }

    @Override
    public Timer getTimer() {
        return timer;
    }

    /** The library's own timer, which takes what is not set on an event loop. */
    Timer library() {
        return super.getTimer();
    }

    /** A timer that schedules on the calling event loop, and on {@code elsewhere} when the caller is none. */
    static final class OnLoop implements Timer {

        private final Timer elsewhere;
        private final Executor defaultExecutor;
        /** Tasks on the loops not yet run nor cancelled, for {@link #countScheduledTasks} (the metrics' gauge). */
        private final LongAdder scheduled = new LongAdder();

        OnLoop(Timer elsewhere, Executor defaultExecutor) {
            this.elsewhere = elsewhere;
            this.defaultExecutor = defaultExecutor;
        }

        @Override
        public int getId() {
            return elsewhere.getId();
        }

        @Override
        public TimerTask schedule(long delayInMillis, Runnable task) {
            return schedule(delayInMillis, task, null);
        }

        @Override
        public TimerTask schedule(long delayInMillis, Runnable task, Executor executor) {
            EventExecutor loop = ThreadExecutorMap.currentExecutor();
            if (loop == null || loop.isShuttingDown()) {
                return elsewhere.schedule(delayInMillis, task, executor);
            }
            Executor runOn = executor != null ? executor : defaultExecutor;
            ScheduledFuture<?> future;
            try {
                future = loop.schedule(() -> {
                    scheduled.decrement();
                    runOn.execute(task);
                }, delayInMillis, TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException shutDown) {
                return elsewhere.schedule(delayInMillis, task, executor);
            }
            // on this loop, the task cannot run before this line
            scheduled.increment();
            return new LoopTask(future, scheduled);
        }

        @Override
        public int countScheduledTasks() {
            return elsewhere.countScheduledTasks() + (int) Math.max(0, scheduled.sum());
        }

        @Override
        public void shutdown() throws InterruptedException {
            // what is still on a loop goes with the loop; the library's thread is stopped by the holder's tear-down
        }
    }

    /** A task in a loop's queue: cancelled by whoever ends the call first, normally the loop itself. */
    private static final class LoopTask implements TimerTask {

        private final ScheduledFuture<?> future;
        private final LongAdder scheduled;

        LoopTask(ScheduledFuture<?> future, LongAdder scheduled) {
            this.future = future;
            this.scheduled = scheduled;
        }

        @Override
        public boolean isDone() {
            return future.isDone();
        }

        @Override
        public boolean cancel() {
            if (future.cancel(false)) {
                scheduled.decrement();
                return true;
            }
            return false;
        }
    }
}
