package dev.ledgerline.transfers.provider;

import io.smallrye.mutiny.Uni;

/**
 * The payment provider as the pipeline sees it. {@code send} is keyed by the transfer's
 * {@code provider_reference}; {@code lookup} tells what really happened to a reference.
 * A failed {@code Uni} means "unknown": the payment may or may not have executed.
 */
public interface PaymentProvider {

    Uni<SendResult> send(PaymentOrder order);

    Uni<LookupResult> lookup(String reference);
}
