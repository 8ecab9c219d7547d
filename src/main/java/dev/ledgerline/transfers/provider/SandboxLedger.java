package dev.ledgerline.transfers.provider;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The sandbox provider's books and misbehaviour, free of any HTTP framework: it executes a payment the
 * moment a send arrives and only then decides on latency, timeouts and errors — so, as with real
 * providers, a call that timed out may well have moved money. With {@code idempotent:false} every send
 * executes again, which makes any duplicate send visible as a second execution.
 *
 * <p>{@link SandboxProvider} serves it inside dev and test builds; the fault suite serves the same class
 * from its own process, so the packaged (prod) jar can be pointed at a sandbox it does not contain.
 */
public final class SandboxLedger {

    /** What to answer: an HTTP status, an optional body, and how long to hold the answer first. */
    public record Answer(int status, ProviderPayment body, long delayMs) {
    }

    public record Stats(long payments, long executions, long duplicateExecutions, long expiredSends) {
    }

    /** What the sandbox remembers of one reference. */
    private static final class Payment {
        final String reference;
        volatile String status;
        volatile String reason;
        final AtomicLong executions = new AtomicLong();

        Payment(String reference) {
            this.reference = reference;
        }

        ProviderPayment view() {
            return new ProviderPayment(reference, status, reason, (int) executions.get());
        }
    }

    private final Map<String, Payment> payments = new ConcurrentHashMap<>();
    private final AtomicLong executions = new AtomicLong();
    private final AtomicLong duplicateExecutions = new AtomicLong();
    private final AtomicLong expiredSends = new AtomicLong();
    private volatile SandboxFaults faults = SandboxFaults.NONE;

    /**
     * A send keyed by {@code reference} (the Idempotency-Key header); {@code false} for a body-less request.
     * {@code notAfter} (the {@code Ledgerline-Not-After} header, RFC 3339) is the sender's deadline: a send
     * that arrives later is refused with 412 and never executes — a worker that was paused past its lease
     * cannot move money after someone else looked the payment up and sent it again.
     */
    public Answer send(String reference, boolean hasBody, String notAfter) {
        if (reference == null || reference.isBlank() || !hasBody) {
            return new Answer(400, null, 0);
        }
        java.time.Instant deadline;
        try {
            deadline = notAfter == null ? null : java.time.OffsetDateTime.parse(notAfter).toInstant();
        } catch (java.time.format.DateTimeParseException e) {
            return new Answer(400, null, 0);
        }
        SandboxFaults f = faults;
        if (roll(f.errorBeforeExecuteRate())) {
            return new Answer(503, null, 0);
        }
        Payment payment = payments.computeIfAbsent(reference, Payment::new);
        int status;
        ProviderPayment body;
        synchronized (payment) {
            if (deadline != null && java.time.Instant.now().isAfter(deadline)) {
                expiredSends.incrementAndGet();
                return new Answer(412, new ProviderPayment(reference, "expired", "the send arrived after its deadline", (int) payment.executions.get()), 0);
            }
            if (f.idempotent() && payment.status != null) {
                status = "rejected".equals(payment.status) ? 422 : 200;
            } else if (roll(f.rejectRate())) {
                payment.status = "rejected";
                payment.reason = "insufficient funds at the sandbox";
                status = 422;
            } else {
                execute(payment);
                status = 201;
            }
            body = payment.view();
        }
        if ("completed".equals(payment.status) && roll(f.errorAfterExecuteRate())) {
            status = 500;
            body = null;
        }
        long delay = f.latencyMs() + (roll(f.timeoutRate()) ? f.hangMs() : 0);
        return new Answer(status, body, delay);
    }

    private void execute(Payment payment) {
        if (payment.executions.incrementAndGet() > 1) {
            duplicateExecutions.incrementAndGet();
        }
        executions.incrementAndGet();
        payment.status = "completed";
        payment.reason = null;
    }

    public Answer lookup(String reference) {
        if (roll(faults.lookupErrorRate())) {
            return new Answer(503, null, 0);
        }
        Payment payment = payments.get(reference);
        if (payment == null || payment.status == null) {
            return new Answer(404, null, 0);
        }
        return new Answer(200, payment.view(), 0);
    }

    /** How many times {@code reference} executed (0 when it never did). */
    public long executions(String reference) {
        Payment payment = payments.get(reference);
        return payment == null ? 0 : payment.executions.get();
    }

    public SandboxFaults setFaults(SandboxFaults requested) {
        faults = (requested == null ? SandboxFaults.NONE : requested).withDefaults();
        return faults;
    }

    public SandboxFaults faults() {
        return faults;
    }

    /** Back to a healthy, idempotent provider; payments and counters are kept. */
    public void reset() {
        faults = SandboxFaults.NONE;
    }

    public Stats stats() {
        return new Stats(payments.values().stream().filter(p -> p.status != null).count(),
                executions.get(), duplicateExecutions.get(), expiredSends.get());
    }

    private static boolean roll(double rate) {
        return rate > 0 && ThreadLocalRandom.current().nextDouble() < rate;
    }
}
