package dev.ledgerline.transfers.provider;

import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.rest.client.annotation.RegisterProvider;
import org.eclipse.microprofile.rest.client.inject.RegisterRestClient;

/**
 * The provider's HTTP contract; {@link ProviderClient} owns its fault tolerance, {@link DeadlineFilter} keeps a
 * send whose deadline passed from leaving the process, and {@link ProviderClockFilter} reads the provider's clock
 * off every answer's {@code Date} header ({@link ProviderClock}).
 */
@RegisterRestClient(configKey = "provider")
@RegisterProvider(DeadlineFilter.class)
@RegisterProvider(ProviderClockFilter.class)
@Path("/payments")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public interface ProviderRestClient {

    /**
     * The send's deadline (RFC 3339): the provider must not execute a send that arrives later. It fences
     * the send itself, as the version fences the database writes: a worker paused past its lease cannot
     * move money after the payment was looked up and sent again. A provider that ignores it still has
     * the Idempotency-Key.
     */
    String NOT_AFTER = "Ledgerline-Not-After";

    /** {@code body} is the send's JSON, {@code PaymentRequest} in {@code provider-api.yaml} ({@link ProviderClient#body}). */
    @POST
    Uni<Response> send(@HeaderParam("Idempotency-Key") String reference, @HeaderParam(NOT_AFTER) String notAfter,
                       byte[] body);

    @GET
    @Path("/{reference}")
    Uni<Response> lookup(@PathParam("reference") String reference);
}
