package dev.ledgerline.devstack.sandbox;

import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The sandbox provider's books and misbehaviour, free of any HTTP framework. As with real providers, a call
 * that timed out may well have moved money: the sandbox decides on latency, timeouts and errors only after it
 * applied the send. With {@code idempotent:false} every send executes again, which makes any duplicate send
 * visible as a second execution.
 *
 * <p>Effects outlive their callers here: a held send is applied on the sandbox's own timer, whether or not the
 * caller is still waiting, and a send can be answered with an error and applied later. What protects against
 * both is the send's deadline ({@code Ledgerline-Not-After}), checked at the moment the send is applied: later
 * than that it is refused and never executes.
 *
 * <p>The sandbox has a clock of its own ({@link #now()}, shifted by {@code clockOffsetMs}): it decides the deadline
 * check and is what its HTTP faces put in the {@code Date} header, as a real provider's clock would.
 *
 * <p>Every applied send is recorded as an {@link Order} — what was paid, to whom, under which deadline — so
 * tests can compare what moved with what the client asked for.
 *
 * <p>{@link SandboxProvider} serves it inside dev and test builds; the fault suite serves the same class from
 * its own process, so the packaged (prod) jar can be pointed at a sandbox it does not contain.
 */
public final class SandboxLedger {

    /** The sandbox's clock for held sends and delayed answers: daemon threads, so it never holds a JVM open. */
    private static final ScheduledExecutorService TIMER = Executors.newScheduledThreadPool(2, runnable -> {
        Thread thread = new Thread(runnable, "sandbox-provider-timer");
        thread.setDaemon(true);
        return thread;
    });

    private static final DateTimeFormatter HTTP_DATE = DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.ROOT);

    /** What to answer: an HTTP status and an optional body. */
    public record Answer(int status, Wire.Payment body) {
    }

    /**
     * One send as the sandbox applied it: executed, rejected, or refused because it arrived after its deadline.
     * {@code appliedAt} is the real instant, not the sandbox's own (possibly shifted) clock, so it can be compared
     * with {@code notAfter} as the service meant it.
     */
    public record Order(String reference, long amount, String currency, String iban, String name, Instant notAfter,
                        Instant appliedAt, String outcome) {
    }

    public record Stats(long payments, long executions, long duplicateExecutions, long expiredSends, long heldSends) {
    }

    /** What the sandbox remembers of one reference. */
    private static final class Payment {
        final String reference;
        volatile String status;
        volatile String reason;
        volatile Instant firstExecutedAt;
        final AtomicLong executions = new AtomicLong();
        final AtomicLong arrivals = new AtomicLong();

        Payment(String reference) {
            this.reference = reference;
        }

        Wire.Payment view() {
            return new Wire.Payment(reference, status, reason, (int) executions.get());
        }
    }

    private final Map<String, Payment> payments = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<Order> orders = new ConcurrentLinkedQueue<>();
    private final AtomicLong executions = new AtomicLong();
    private final AtomicLong duplicateExecutions = new AtomicLong();
    private final AtomicLong expiredSends = new AtomicLong();
    private final AtomicLong heldSends = new AtomicLong();
    private volatile SandboxFaults faults = SandboxFaults.NONE;

    /**
     * A send keyed by {@code reference} (the Idempotency-Key header) with its body ({@code null} when the
     * request had none). {@code notAfter} (the {@code Ledgerline-Not-After} header, RFC 3339) is the sender's
     * deadline: a send applied later is refused with 412 and never executes.
     */
    public CompletionStage<Answer> send(String reference, Wire.PaymentOrder body, String notAfter) {
        if (reference == null || reference.isBlank() || body == null || body.destination() == null) {
            return done(new Answer(400, null));
        }
        Instant deadline;
        try {
            deadline = notAfter == null ? null : OffsetDateTime.parse(notAfter).toInstant();
        } catch (DateTimeParseException e) {
            return done(new Answer(400, null));
        }
        SandboxFaults f = faults;
        if (roll(f.errorBeforeExecuteRate())) {
            return done(new Answer(503, null));
        }
        if (f.refuseWith() > 0) {
            return done(new Answer(f.refuseWith(), null));
        }
        Payment payment = payments.computeIfAbsent(reference, Payment::new);
        boolean first = payment.arrivals.incrementAndGet() == 1;
        if (roll(f.errorThenExecuteRate())) {
            // the caller hears an error now; the payment is applied later all the same
            later(heldFor(deadline, f), () -> apply(payment, body, deadline, f));
            return done(new Answer(503, null));
        }
        if (first && (f.holdMs() > 0 || f.executeBeforeDeadlineMs() > 0) && roll(f.holdRate())) {
            // held in transit: applied on the sandbox's timer even if the caller stopped waiting long before
            heldSends.incrementAndGet();
            CompletableFuture<Answer> answer = new CompletableFuture<>();
            later(heldFor(deadline, f), () -> answerAfter(apply(payment, body, deadline, f), f, answer));
            return answer;
        }
        CompletableFuture<Answer> answer = new CompletableFuture<>();
        answerAfter(apply(payment, body, deadline, f), f, answer);
        return answer;
    }

    /**
     * How long a held send travels before it is applied: until {@code executeBeforeDeadlineMs} before its deadline
     * by the sandbox's clock (at once if that has passed), or {@code holdMs}.
     */
    private long heldFor(Instant deadline, SandboxFaults f) {
        if (f.executeBeforeDeadlineMs() > 0 && deadline != null) {
            return Math.max(0, Duration.between(now(), deadline).toMillis() - f.executeBeforeDeadlineMs());
        }
        return f.holdMs();
    }

    /**
     * The sandbox's own clock: the real one shifted by the current {@code clockOffsetMs}. A clock is the provider's,
     * not the send's, so a held send is judged by the offset in force when it is applied.
     */
    public Instant now() {
        return Instant.now().plusMillis(faults.clockOffsetMs());
    }

    /** The sandbox's clock as an HTTP {@code Date} header carries it (IMF-fixdate: whole seconds, GMT). */
    public String httpDate() {
        return HTTP_DATE.format(now().atOffset(ZoneOffset.UTC));
    }

    /** Applies a send that reached the provider: refused past its deadline by the sandbox's clock, else executed or rejected. */
    private Answer apply(Payment payment, Wire.PaymentOrder body, Instant deadline, SandboxFaults f) {
        int status;
        Wire.Payment view;
        synchronized (payment) {
            Instant now = Instant.now();
            if (deadline != null && now.plusMillis(faults.clockOffsetMs()).isAfter(deadline)) {
                expiredSends.incrementAndGet();
                record(payment, body, deadline, now, "expired");
                return new Answer(412, new Wire.Payment(payment.reference, "expired", "the send arrived after its deadline",
                        (int) payment.executions.get()));
            }
            if (f.idempotent() && payment.status != null) {
                status = "rejected".equals(payment.status) ? 422 : 200;
            } else if (roll(f.rejectRate())) {
                payment.status = "rejected";
                payment.reason = "insufficient funds at the sandbox";
                record(payment, body, deadline, now, "rejected");
                status = 422;
            } else {
                execute(payment, now);
                record(payment, body, deadline, now, "executed");
                status = 201;
            }
            view = payment.view();
        }
        if ("completed".equals(payment.status) && roll(f.errorAfterExecuteRate())) {
            return new Answer(500, null);
        }
        return new Answer(status, view);
    }

    private void answerAfter(Answer applied, SandboxFaults f, CompletableFuture<Answer> answer) {
        long delay = applied.status() == 412 ? 0 : f.latencyMs() + (roll(f.timeoutRate()) ? f.hangMs() : 0);
        if (delay <= 0) {
            answer.complete(applied);
        } else {
            later(delay, () -> answer.complete(applied));
        }
    }

    private void execute(Payment payment, Instant now) {
        if (payment.executions.incrementAndGet() > 1) {
            duplicateExecutions.incrementAndGet();
        }
        executions.incrementAndGet();
        if (payment.firstExecutedAt == null) {
            payment.firstExecutedAt = now;
        }
        payment.status = "completed";
        payment.reason = null;
    }

    private void record(Payment payment, Wire.PaymentOrder body, Instant deadline, Instant at, String outcome) {
        orders.add(new Order(payment.reference, body.amount(), body.currency(), body.destination().iban(),
                body.destination().name(), deadline, at, outcome));
    }

    public Answer lookup(String reference) {
        SandboxFaults f = faults;
        if (roll(f.lookupErrorRate())) {
            return new Answer(503, null);
        }
        Payment payment = payments.get(reference);
        if (payment == null || payment.status == null) {
            return new Answer(404, null);
        }
        Instant executed = payment.firstExecutedAt;
        if (executed != null && f.lookupLagMs() > 0 && executed.plusMillis(f.lookupLagMs()).isAfter(Instant.now())) {
            // the provider's books have not caught up with its execution yet
            return new Answer(404, null);
        }
        return new Answer(200, payment.view());
    }

    /** How many times {@code reference} executed (0 when it never did). */
    public long executions(String reference) {
        Payment payment = payments.get(reference);
        return payment == null ? 0 : payment.executions.get();
    }

    /** Every send the sandbox applied, in the order it applied them. */
    public List<Order> orders() {
        return new ArrayList<>(orders);
    }

    /** The sends applied under one reference. */
    public List<Order> orders(String reference) {
        return orders.stream().filter(o -> o.reference().equals(reference)).toList();
    }

    public SandboxFaults setFaults(SandboxFaults requested) {
        faults = (requested == null ? SandboxFaults.NONE : requested).withDefaults();
        return faults;
    }

    public SandboxFaults faults() {
        return faults;
    }

    /** Back to a healthy, idempotent provider; payments, orders and counters are kept. */
    public void reset() {
        faults = SandboxFaults.NONE;
    }

    public Stats stats() {
        return new Stats(payments.values().stream().filter(p -> p.status != null).count(),
                executions.get(), duplicateExecutions.get(), expiredSends.get(), heldSends.get());
    }

    private static CompletionStage<Answer> done(Answer answer) {
        return CompletableFuture.completedFuture(answer);
    }

    private static void later(long delayMs, Runnable action) {
        TIMER.schedule(action, delayMs, TimeUnit.MILLISECONDS);
    }

    private static boolean roll(double rate) {
        return rate > 0 && ThreadLocalRandom.current().nextDouble() < rate;
    }
}
