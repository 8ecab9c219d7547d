package dev.ledgerline.transfers.provider;

import jakarta.ws.rs.client.ClientRequestContext;
import jakarta.ws.rs.client.ClientRequestFilter;

import java.time.Instant;
import java.time.OffsetDateTime;

/**
 * The last check before a send leaves the process: a send whose {@code Ledgerline-Not-After} deadline has
 * already passed is not written. SmallRye Fault Tolerance applies {@code @Timeout} outside {@code @Bulkhead}, so
 * a send queued in the bulkhead stays queued after its caller gave up and would otherwise leave later; checking
 * here, as the request is built for the wire, keeps it in. The provider enforces the same deadline on arrival:
 * this filter only spares it sends that are certain to be refused, and providers that ignore the header.
 */
public class DeadlineFilter implements ClientRequestFilter {

    @Override
    public void filter(ClientRequestContext request) {
        String notAfter = request.getHeaderString(ProviderRestClient.NOT_AFTER);
        if (notAfter != null && Instant.now().isAfter(OffsetDateTime.parse(notAfter).toInstant())) {
            throw new SendNotWrittenException("the send's deadline " + notAfter + " passed before it was written");
        }
    }
}
