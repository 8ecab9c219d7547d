package dev.ledgerline.devstack.sandbox;

import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import java.util.List;

/**
 * The sandbox payment provider's HTTP face, built only into dev and test: a thin JAX-RS
 * adapter over {@link SandboxLedger}, which holds the payments and the faults. Every send and lookup answer
 * carries a {@code Date} header from the sandbox's own clock, so a shifted clock ({@code clockOffsetMs}) is seen
 * by the service the way a real provider's would be.
 */
@Path("/sandbox/provider")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class SandboxProvider {

    private final SandboxLedger ledger = new SandboxLedger();

    @POST
    @Path("/payments")
    public Uni<Response> send(@HeaderParam("Idempotency-Key") String reference,
                              @HeaderParam(Wire.NOT_AFTER) String notAfter,
                              Wire.PaymentOrder body) {
        // the ledger applies a held send on its own timer: cancelling this Uni (the caller gave up) cannot stop it
        return Uni.createFrom().completionStage(ledger.send(reference, body, notAfter)).map(this::response);
    }

    /** Every send the sandbox applied: what was paid, to whom, under which deadline, and what came of it. */
    @GET
    @Path("/orders")
    public List<SandboxLedger.Order> orders(@QueryParam("reference") String reference) {
        return reference == null ? ledger.orders() : ledger.orders(reference);
    }

    @GET
    @Path("/payments/{reference}")
    public Response lookup(@PathParam("reference") String reference) {
        return response(ledger.lookup(reference));
    }

    @PUT
    @Path("/faults")
    public SandboxFaults setFaults(SandboxFaults requested) {
        return ledger.setFaults(requested);
    }

    @GET
    @Path("/faults")
    public SandboxFaults faults() {
        return ledger.faults();
    }

    /** Back to a healthy, idempotent provider; payments and counters are kept. */
    @DELETE
    @Path("/faults")
    public Response reset() {
        ledger.reset();
        return Response.noContent().build();
    }

    @GET
    @Path("/stats")
    public SandboxLedger.Stats stats() {
        return ledger.stats();
    }

    /** A send's or a lookup's answer, dated by the sandbox's own clock as it leaves (RFC 9110 {@code Date}). */
    private Response response(SandboxLedger.Answer answer) {
        Response.ResponseBuilder builder = Response.status(answer.status()).header(HttpHeaders.DATE, ledger.httpDate());
        return (answer.body() == null ? builder : builder.entity(answer.body())).build();
    }
}
