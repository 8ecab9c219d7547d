package dev.ledgerline.transfers.provider;

import dev.ledgerline.transfers.config.Breaker;
import dev.ledgerline.transfers.config.Deadlines;
import dev.ledgerline.transfers.config.Deadlines.Deadline;
import dev.ledgerline.transfers.config.LedgerlineConfig;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;
import io.smallrye.mutiny.subscription.UniEmitter;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * The guards of the provider calls, one set for sends ({@value #SEND_BREAKER}) and one for lookups
 * ({@value #LOOKUP_BREAKER}), built once from {@code ledgerline.provider.*}: the rules of SmallRye Fault Tolerance's
 * {@code @Timeout @CircuitBreaker @Bulkhead} on a {@code Uni} method, which guarded these calls before, nested as it
 * nested them:
 * <ul>
 *   <li><b>the circuit breaker</b> ({@link Breaker}, {@code breaker.*}) outermost: while open a call fails at once,
 *       unknown, without reaching the provider; it counts every call that fails, a timeout and a full bulkhead
 *       included, and every item as a success (a rejection is an item);</li>
 *   <li><b>the timeout</b> ({@code timeout-ms}) around the bulkhead, so the wait for a turn counts: on expiry the caller
 *       gets {@link ProviderUnknownOutcomeException} on its own Vert.x context, a call still waiting for its turn never
 *       starts, and a running one is cancelled, which makes {@link ProviderHttp} reset its request; what was written
 *       may still execute, which is why a timeout is unknown. The deadline is checked with the others of its kind by
 *       one periodic timer ({@link Deadlines}), up to {@value #TICK_MS} ms late;</li>
 *   <li><b>the bulkhead</b> ({@code bulkhead.*}) innermost: {@code max-concurrent} calls run at once, {@code waiting-queue}
 *       more wait for a turn, in order, and start on the Vert.x context they were made on; one more fails at once.</li>
 * </ul>
 * A caller that cancels is no verdict on the provider: its call leaves the queue or is cancelled, and is not counted.
 *
 * <p>Kept by hand because it sits on every provider call: the annotations' machinery (per-invocation look-ups, its
 * context and events, the bulkhead's offload, the timeout's timer) was 8.7 % of a new transfer's profile samples
 * (bench/CPU-AB.md). The pipeline reads the breakers' states ({@link #sendState}, {@link #lookupState}) to hold sends and
 * lookups while the provider is down, and {@link #onClosed} to hasten reconciliation once it is back.
 */
@Singleton
public class ProviderGuards {

    public static final String SEND_BREAKER = "provider-send";
    public static final String LOOKUP_BREAKER = "provider-lookup";
    /** The timeouts' tick: how late at most a timeout fires. */
    static final long TICK_MS = 25;

    private final Guard send;
    private final Guard lookup;

    @Inject
    public ProviderGuards(Vertx vertx, LedgerlineConfig config) {
        this(vertx, config.provider(), config.provider().timeout());
    }

    /** With another timeout for sends than the configured one (a test that holds a worker in its send). */
    protected ProviderGuards(Vertx vertx, LedgerlineConfig.Provider settings, Duration sendTimeout) {
        this.send = guard(SEND_BREAKER, vertx, settings, sendTimeout);
        this.lookup = guard(LOOKUP_BREAKER, vertx, settings, settings.timeout());
    }

    private static Guard guard(String name, Vertx vertx, LedgerlineConfig.Provider settings, Duration timeout) {
        LedgerlineConfig.Provider.Breaker b = settings.breaker();
        Breaker breaker = new Breaker(b.requestVolume(), b.failureRatio(), TimeUnit.MILLISECONDS.toNanos(b.delayMs()),
                b.successThreshold());
        return new Guard(name, vertx, breaker, timeout, settings.bulkhead().maxConcurrent(), settings.bulkhead().waitingQueue());
    }

    /** {@code call} (made only when the bulkhead gives it a turn) under the guards of sends. */
    public <T> Uni<T> send(Supplier<Uni<T>> call) {
        return send.call(call);
    }

    /** {@code call} (made only when the bulkhead gives it a turn) under the guards of lookups. */
    public <T> Uni<T> lookup(Supplier<Uni<T>> call) {
        return lookup.call(call);
    }

    /** The send breaker's state now: half-open once an open breaker's delay has passed. */
    public Breaker.State sendState() {
        return send.breaker.state(System.nanoTime());
    }

    /** The lookup breaker's state now: half-open once an open breaker's delay has passed. */
    public Breaker.State lookupState() {
        return lookup.breaker.state(System.nanoTime());
    }

    /**
     * {@code listener} runs whenever either breaker closes again, on the thread that closed it and while that breaker's
     * monitor is held: it may set a flag, nothing more.
     */
    public void onClosed(Runnable listener) {
        for (Guard guard : new Guard[] {send, lookup}) {
            guard.breaker.onChange(state -> {
                if (state == Breaker.State.CLOSED) {
                    listener.run();
                }
            });
        }
    }

    /** Both breakers closed with an empty window (tests that heal the provider start from a known state). */
    public void resetBreakers() {
        send.breaker.reset();
        lookup.breaker.reset();
    }

    @PreDestroy
    void stop() {
        send.close();
        lookup.close();
    }

    /** One kind's breaker, timeouts and bulkhead. */
    static final class Guard {

        private final String name;
        private final Breaker breaker;
        private final Deadlines timeouts;
        private final long timeoutMs;
        private final int maxConcurrent;
        private final int waitingQueue;
        /** Under this guard's monitor: the calls running, and those waiting for a turn in the order they came. */
        private int running;
        private final ArrayDeque<Call<?>> waiting = new ArrayDeque<>();

        Guard(String name, Vertx vertx, Breaker breaker, Duration timeout, int maxConcurrent, int waitingQueue) {
            if (maxConcurrent < 1 || waitingQueue < 0) {
                throw new IllegalArgumentException("ledgerline.provider.bulkhead: max-concurrent >= 1, waiting-queue >= 0");
            }
            this.name = name;
            this.breaker = breaker;
            this.timeoutMs = timeout.toMillis();
            this.timeouts = new Deadlines(vertx, timeout, Duration.ofMillis(Math.min(TICK_MS, Math.max(1, timeoutMs / 10))));
            this.maxConcurrent = maxConcurrent;
            this.waitingQueue = waitingQueue;
        }

        /** Stops checking its timeouts (what is still armed never expires). */
        void close() {
            timeouts.close();
        }

        <T> Uni<T> call(Supplier<Uni<T>> operation) {
            return Uni.createFrom().emitter(emitter -> {
                if (!breaker.allow(System.nanoTime())) {
                    emitter.fail(new ProviderUnknownOutcomeException("the " + name + " circuit breaker is open"));
                    return;
                }
                new Call<>(this, operation, emitter).begin();
            });
        }

        /** Whether {@code call} runs now, waits for a turn (queued), or is refused (the queue is full). */
        private synchronized Turn enter(Call<?> call) {
            if (running < maxConcurrent) {
                running++;
                return Turn.NOW;
            }
            if (waiting.size() < waitingQueue) {
                waiting.addLast(call);
                return Turn.WAIT;
            }
            return Turn.REFUSED;
        }

        /** A running call ended: its turn goes to the longest waiting call, which starts on its own context. */
        private void leave() {
            Call<?> next;
            synchronized (this) {
                next = waiting.pollFirst();
                if (next == null) {
                    running--;
                }
            }
            if (next != null) {
                next.startOnItsContext();
            }
        }

        /** Takes a call that will never start out of the queue; false when it is not there (it has its turn already). */
        private synchronized boolean withdraw(Call<?> call) {
            return waiting.remove(call);
        }

        /** The calls running and waiting now (tests). */
        synchronized int[] occupancy() {
            return new int[] {running, waiting.size()};
        }
    }

    /** What the bulkhead says to a call. */
    private enum Turn { NOW, WAIT, REFUSED }

    /**
     * One guarded call: whoever comes first, its answer, its timeout or its caller's cancellation, settles it. The
     * call is its own settled flag ({@code true} once settled), one object fewer per call.
     */
    private static final class Call<T> extends AtomicBoolean {

        private final Guard guard;
        private final Supplier<Uni<T>> operation;
        private final UniEmitter<? super T> emitter;
        private final Context context = Vertx.currentContext();
        private Deadline deadline;
        /** The running operation's subscription, once it started. */
        private volatile Cancellable inner;

        Call(Guard guard, Supplier<Uni<T>> operation, UniEmitter<? super T> emitter) {
            this.guard = guard;
            this.operation = operation;
            this.emitter = emitter;
        }

        void begin() {
            deadline = guard.timeouts.arm(this::expire);
            emitter.onTermination(this::abandon);
            switch (guard.enter(this)) {
                case NOW -> start();
                case WAIT -> { } // a call that ends hands it its turn (Guard#leave)
                case REFUSED -> {
                    if (compareAndSet(false, true)) {
                        deadline.settle();
                        guard.breaker.failed(System.nanoTime());
                        emitter.fail(new ProviderUnknownOutcomeException("the " + guard.name + " bulkhead is full"));
                    }
                }
            }
        }

        void startOnItsContext() {
            if (context == null) {
                start();
            } else {
                context.runOnContext(ignored -> start());
            }
        }

        /** Runs the operation with the turn this call holds; a call settled meanwhile hands its turn on instead. */
        private void start() {
            if (get()) {
                guard.leave();
                return;
            }
            Uni<T> uni;
            try {
                uni = operation.get();
            } catch (RuntimeException e) {
                guard.leave();
                finish(null, e);
                return;
            }
            Cancellable subscription = uni.onTermination().invoke(guard::leave)
                    .subscribe().with(item -> finish(item, null), failure -> finish(null, failure));
            inner = subscription;
            if (get() && subscription != null) {
                subscription.cancel(); // settled (timed out, abandoned) while it was starting
            }
        }

        private void finish(T item, Throwable failure) {
            if (!compareAndSet(false, true)) {
                return;
            }
            deadline.settle();
            if (failure == null) {
                guard.breaker.succeeded(System.nanoTime());
                emitter.complete(item);
            } else {
                guard.breaker.failed(System.nanoTime());
                emitter.fail(failure);
            }
        }

        private void expire() {
            if (!compareAndSet(false, true)) {
                return;
            }
            guard.withdraw(this);
            guard.breaker.failed(System.nanoTime());
            Cancellable running = inner;
            if (running != null) {
                running.cancel();
            }
            emitter.fail(new ProviderUnknownOutcomeException("the provider did not answer within " + guard.timeoutMs + " ms"
                    + " (" + guard.name + ")"));
        }

        /** The caller cancelled (or the emitter ended, which finds this call settled already). */
        private void abandon() {
            if (!compareAndSet(false, true)) {
                return;
            }
            deadline.settle();
            guard.withdraw(this);
            guard.breaker.abandoned(System.nanoTime());
            Cancellable running = inner;
            if (running != null) {
                running.cancel();
            }
        }
    }
}
