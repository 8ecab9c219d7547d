package dev.ledgerline.transfers.config;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * A count-based circuit breaker, the rules of SmallRye Fault Tolerance's {@code @CircuitBreaker}, which guarded these
 * calls before: over the last {@code window} calls, a failure ratio of at least {@code failureRatio} opens it (judged
 * as a call fails); after {@code delayNanos} it is half-open and lets {@code successThreshold} trial calls through;
 * that many successes close it, one failure opens it again. Redis's breaker ({@code ledgerline.redis.breaker.*}) has one
 * trial, the provider's ({@code ledgerline.provider.breaker.*}, one for sends and one for lookups) two by default.
 *
 * <p>A timeout counts as a failure only if Redis answered no call since the timed-out one was sent
 * ({@link #timedOut}). On a saturated CPU, answers queue behind this process's own work and arrive late
 * although Redis is fine — it keeps answering the calls sent before and after — and opening the breaker
 * then would move every request onto the slower database path exactly when the instance has no CPU to spare
 * (bench/FINDINGS.md). A paused or unreachable Redis answers nothing, so its timeouts still open it.
 *
 * <p>Kept by hand because it sits on every Redis command of every request and on every provider call: the
 * annotation-driven version cost about a third of the replay path's CPU in the benchmark's profile (bench/FINDINGS.md),
 * SmallRye's programmatic {@code Guard}/{@code TypedGuard} 3–4 times this one's CPU per call even with FT metrics off
 * (bench/FT-AB.md), and around the provider calls the annotations' machinery was 8.7 % of a new transfer's samples
 * (bench/CPU-AB.md). All state changes happen under the object's monitor, and a call holds it only for a few field
 * updates.
 */
public final class Breaker {

    public enum State { CLOSED, OPEN, HALF_OPEN }

    private final boolean[] outcomes;
    private final int failuresToOpen;
    private final long delayNanos;
    private final int successThreshold;
    /** Told of every change of state, on the thread that made it, under the monitor: a flag or a counter, no more. */
    private final List<Consumer<State>> listeners = new CopyOnWriteArrayList<>();

    private State state = State.CLOSED;
    private int next;
    private int recorded;
    private int failures;
    private long openedAt;
    /** While half-open: trial calls let through, and those of them that succeeded. */
    private int trials;
    private int trialSuccesses;
    /** When the latest answer came in (any call that succeeded); {@link Long#MIN_VALUE} before the first. */
    private long lastAnswerAt = Long.MIN_VALUE;

    /** One trial call closes it again. */
    public Breaker(int window, double failureRatio, long delayNanos) {
        this(window, failureRatio, delayNanos, 1);
    }

    public Breaker(int window, double failureRatio, long delayNanos, int successThreshold) {
        if (window < 1 || failureRatio <= 0 || failureRatio > 1 || delayNanos < 0 || successThreshold < 1) {
            throw new IllegalArgumentException("a breaker needs request-volume >= 1, failure-ratio in (0, 1], delay >= 0"
                    + " and success-threshold >= 1");
        }
        this.outcomes = new boolean[window];
        this.failuresToOpen = (int) Math.ceil(window * failureRatio);
        this.delayNanos = delayNanos;
        this.successThreshold = successThreshold;
    }

    /**
     * Whether a call may go ahead now; when open and the delay has passed, it turns half-open, and the first
     * {@code successThreshold} callers to get {@code true} are its trials.
     */
    public synchronized boolean allow(long nowNanos) {
        return switch (state) {
            case CLOSED -> true;
            case HALF_OPEN -> {
                if (trials >= successThreshold) {
                    yield false;
                }
                trials++;
                yield true;
            }
            case OPEN -> {
                if (nowNanos - openedAt < delayNanos) {
                    yield false;
                }
                change(State.HALF_OPEN);
                trials = 1;
                trialSuccesses = 0;
                yield true;
            }
        };
    }

    public synchronized void succeeded() {
        succeeded(System.nanoTime());
    }

    public synchronized void succeeded(long nowNanos) {
        lastAnswerAt = nowNanos;
        if (state == State.HALF_OPEN) {
            if (++trialSuccesses >= successThreshold) {
                close();
            }
        } else if (state == State.CLOSED) {
            record(false);
        }
    }

    public synchronized void failed(long nowNanos) {
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
    public synchronized boolean timedOut(long sentAtNanos, long nowNanos) {
        if (lastAnswerAt != Long.MIN_VALUE && lastAnswerAt - sentAtNanos > 0) {
            abandoned(nowNanos);
            return false;
        }
        failed(nowNanos);
        return true;
    }

    /**
     * A call that ended without a verdict (its caller cancelled it, e.g. the client went away): it says
     * nothing about the other side, so it is not counted; but while half-open it may have been a trial, so the trials
     * start over with the next call.
     */
    public synchronized void abandoned(long nowNanos) {
        if (state == State.HALF_OPEN) {
            change(State.OPEN);
            openedAt = nowNanos - delayNanos;
        }
    }

    /** The state as the last call left it: open until a call comes after the delay. */
    public synchronized State state() {
        return state;
    }

    /**
     * The state a call would find at {@code nowNanos}: half-open once an open breaker's delay has passed, though no call
     * came yet to make it so. A caller that sends nothing while the breaker is open reads this one, or it never would.
     */
    public synchronized State state(long nowNanos) {
        return state == State.OPEN && nowNanos - openedAt >= delayNanos ? State.HALF_OPEN : state;
    }

    /** Closed, with an empty window. */
    public synchronized void reset() {
        close();
    }

    /**
     * {@code listener} hears every change of state from now on, on the thread that makes it and while this breaker's
     * monitor is held: it may set a flag, nothing more.
     */
    public void onChange(Consumer<State> listener) {
        listeners.add(listener);
    }

    private void change(State to) {
        if (state != to) {
            state = to;
            for (Consumer<State> listener : listeners) {
                listener.accept(to);
            }
        }
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
        change(State.OPEN);
        openedAt = nowNanos;
    }

    private void close() {
        change(State.CLOSED);
        Arrays.fill(outcomes, false);
        next = 0;
        recorded = 0;
        failures = 0;
    }
}
