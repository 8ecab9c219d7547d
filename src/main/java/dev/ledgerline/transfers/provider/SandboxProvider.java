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

/**
 * The sandbox payment provider's HTTP face (DESIGN §6), built only into dev and test: a thin JAX-RS
 * adapter over {@link SandboxLedger}, which holds the payments and the faults.
 */
@Path("/sandbox/provider")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
@IfBuildProperty(name = "ledgerline.sandbox.enabled", stringValue = "true")
public class SandboxProvider {

    private final SandboxLedger ledger = new SandboxLedger();

    @POST
    @Path("/payments")
    public Uni<Response> send(@HeaderParam("Idempotency-Key") String reference,
                              @HeaderParam(ProviderRestClient.NOT_AFTER) String notAfter,
                              ProviderRestClient.PaymentBody body) {
        SandboxLedger.Answer answer = ledger.send(reference, body != null, notAfter);
        Uni<Response> result = Uni.createFrom().item(response(answer));
        return answer.delayMs() > 0 ? result.onItem().delayIt().by(Duration.ofMillis(answer.delayMs())) : result;
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

    private static Response response(SandboxLedger.Answer answer) {
        Response.ResponseBuilder builder = Response.status(answer.status());
        return (answer.body() == null ? builder : builder.entity(answer.body())).build();
    }
}
