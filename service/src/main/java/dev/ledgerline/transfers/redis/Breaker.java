package dev.ledgerline.transfers.redis;

import java.util.Arrays;

/**
 * A count-based circuit breaker, the same rules SmallRye Fault Tolerance applied here before: over the
 * last {@code window} calls, a failure ratio of at least {@code failureRatio} opens it; after
 * {@code delayNanos} one trial call is let through; its success closes it, its failure opens it again.
 *
 * <p>A timeout counts as a failure only if Redis answered no call since the timed-out one was sent
 * ({@link #timedOut}). On a saturated CPU, answers queue behind this process's own work and arrive late
 * although Redis is fine — it keeps answering the calls sent before and after — and opening the breaker
 * then would move every request onto the slower database path exactly when the instance has no CPU to spare
 * (bench/FINDINGS.md). A paused or unreachable Redis answers nothing, so its timeouts still open it.
 *
 * <p>Kept by hand because it sits on every Redis command of every request: the annotation-driven
 * version cost about a third of the replay path's CPU in the benchmark's profile (bench/FINDINGS.md), and
 * SmallRye's programmatic {@code Guard}/{@code TypedGuard} cost 3–4 times its CPU per call even with FT metrics
 * off (bench/FT-AB.md). The settings are {@code ledgerline.redis.breaker.*}.
 * All state changes happen under the object's monitor, and a call holds it only for a few field updates.
 */
final class Breaker {

    enum State { CLOSED, OPEN, HALF_OPEN }

    private final boolean[] outcomes;
    private final int failuresToOpen;
    private final long delayNanos;

    private State state = State.CLOSED;
    private int next;
    private int recorded;
    private int failures;
    private long openedAt;
    /** When the latest answer came in (any call that succeeded); {@link Long#MIN_VALUE} before the first. */
    private long lastAnswerAt = Long.MIN_VALUE;

    Breaker(int window, double failureRatio, long delayNanos) {
        if (window < 1 || failureRatio <= 0 || failureRatio > 1 || delayNanos < 0) {
            throw new IllegalArgumentException("ledgerline.redis.breaker: request-volume >= 1, failure-ratio in (0, 1], delay >= 0");
        }
        this.outcomes = new boolean[window];
        this.failuresToOpen = (int) Math.ceil(window * failureRatio);
        this.delayNanos = delayNanos;
    }

    /** Whether a call may go ahead now; when open and the delay has passed, the one caller that gets {@code true} is the trial. */
    synchronized boolean allow(long nowNanos) {
        return switch (state) {
            case CLOSED -> true;
            case HALF_OPEN -> false; // one trial at a time
            case OPEN -> {
                if (nowNanos - openedAt < delayNanos) {
                    yield false;
                }
                state = State.HALF_OPEN;
                yield true;
            }
        };
    }

    synchronized void succeeded() {
        succeeded(System.nanoTime());
    }

    synchronized void succeeded(long nowNanos) {
        lastAnswerAt = nowNanos;
        if (state == State.HALF_OPEN) {
            close();
        } else if (state == State.CLOSED) {
            record(false);
        }
    }

    synchronized void failed(long nowNanos) {
        if (state == State.HALF_OPEN) {
            open(nowNanos);
        } else if (state == State.CLOSED) {
            record(true);
            if (recorded == outcomes.length && failures >= failuresToOpen) {
                open(nowNanos);
            }
        }
    }

    /**
     * A call sent at {@code sentAtNanos} got no answer in time: a failure if Redis answered nothing since it
     * was sent, otherwise this process was too busy to read the answer in time, which says nothing about Redis
     * (not counted, like {@link #abandoned}). {@code true} when it was counted as a failure.
     */
    synchronized boolean timedOut(long sentAtNanos, long nowNanos) {
        if (lastAnswerAt != Long.MIN_VALUE && lastAnswerAt - sentAtNanos > 0) {
            abandoned(nowNanos);
            return false;
        }
        failed(nowNanos);
        return true;
    }

    /**
     * A call that ended without a verdict (its caller cancelled it, e.g. the client went away): it says
     * nothing about Redis, so it is not counted; but when it was the trial, the next call becomes the trial.
     */
    synchronized void abandoned(long nowNanos) {
        if (state == State.HALF_OPEN) {
            state = State.OPEN;
            openedAt = nowNanos - delayNanos;
        }
    }

    synchronized State state() {
        return state;
    }

    /** Closed, with an empty window. */
    synchronized void reset() {
        close();
    }

    private void record(boolean failure) {
        if (recorded == outcomes.length && outcomes[next]) {
            failures--;
        }
        outcomes[next] = failure;
        if (failure) {
            failures++;
        }
        next = (next + 1) % outcomes.length;
        recorded = Math.min(recorded + 1, outcomes.length);
    }

    private void open(long nowNanos) {
        state = State.OPEN;
        openedAt = nowNanos;
    }

    private void close() {
        state = State.CLOSED;
        Arrays.fill(outcomes, false);
        next = 0;
        recorded = 0;
        failures = 0;
    }
}
