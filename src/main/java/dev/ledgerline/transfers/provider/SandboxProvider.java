package dev.ledgerline.transfers.provider;

import io.quarkus.arc.properties.IfBuildProperty;
import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A stand-in payment provider with the real adapter's HTTP contract (DESIGN §6), built only into dev and
 * test. It executes a payment the moment the request arrives and only then applies latency, timeouts and
 * errors — so, as with real providers, a call that timed out may well have moved money. With
 * {@code idempotent:false} every send executes again, which makes any duplicate send visible as a second
 * execution.
 */
@Path("/sandbox/provider")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
@IfBuildProperty(name = "ledgerline.sandbox.enabled", stringValue = "true")
public class SandboxProvider {

    /** What the sandbox remembers of one reference. */
    static final class Payment {
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

    public record Stats(long payments, long executions, long duplicateExecutions) {
    }

    private final Map<String, Payment> payments = new ConcurrentHashMap<>();
    private final AtomicLong executions = new AtomicLong();
    private final AtomicLong duplicateExecutions = new AtomicLong();
    private volatile SandboxFaults faults = SandboxFaults.NONE;

    @POST
    @Path("/payments")
    public Uni<Response> send(@HeaderParam("Idempotency-Key") String reference, ProviderRestClient.PaymentBody body) {
        if (reference == null || reference.isBlank() || body == null) {
            return Uni.createFrom().item(Response.status(400).build());
        }
        SandboxFaults f = faults;
        if (roll(f.errorBeforeExecuteRate())) {
            return Uni.createFrom().item(Response.status(503).build());
        }
        Payment payment = payments.computeIfAbsent(reference, Payment::new);
        Response answer;
        synchronized (payment) {
            if (f.idempotent() && payment.status != null) {
                answer = respond(payment);
            } else if (roll(f.rejectRate())) {
                payment.status = "rejected";
                payment.reason = "insufficient funds at the sandbox";
                answer = Response.status(422).entity(payment.view()).build();
            } else {
                execute(payment);
                answer = Response.status(201).entity(payment.view()).build();
            }
        }
        if ("completed".equals(payment.status) && roll(f.errorAfterExecuteRate())) {
            answer = Response.status(500).build();
        }
        long delay = f.latencyMs() + (roll(f.timeoutRate()) ? f.hangMs() : 0);
        Uni<Response> result = Uni.createFrom().item(answer);
        return delay > 0 ? result.onItem().delayIt().by(Duration.ofMillis(delay)) : result;
    }

    private void execute(Payment payment) {
        if (payment.executions.incrementAndGet() > 1) {
            duplicateExecutions.incrementAndGet();
        }
        executions.incrementAndGet();
        payment.status = "completed";
        payment.reason = null;
    }

    private static Response respond(Payment payment) {
        return Response.status("rejected".equals(payment.status) ? 422 : 200).entity(payment.view()).build();
    }

    @GET
    @Path("/payments/{reference}")
    public Response lookup(@PathParam("reference") String reference) {
        if (roll(faults.lookupErrorRate())) {
            return Response.status(503).build();
        }
        Payment payment = payments.get(reference);
        if (payment == null || payment.status == null) {
            return Response.status(404).build();
        }
        return Response.ok(payment.view()).build();
    }

    @PUT
    @Path("/faults")
    public SandboxFaults setFaults(SandboxFaults requested) {
        faults = (requested == null ? SandboxFaults.NONE : requested).withDefaults();
        return faults;
    }

    @GET
    @Path("/faults")
    public SandboxFaults faults() {
        return faults;
    }

    /** Back to a healthy, idempotent provider; payments and counters are kept. */
    @DELETE
    @Path("/faults")
    public Response reset() {
        faults = SandboxFaults.NONE;
        return Response.noContent().build();
    }

    @GET
    @Path("/stats")
    public Stats stats() {
        return new Stats(payments.values().stream().filter(p -> p.status != null).count(),
                executions.get(), duplicateExecutions.get());
    }

    private static boolean roll(double rate) {
        return rate > 0 && ThreadLocalRandom.current().nextDouble() < rate;
    }
}
