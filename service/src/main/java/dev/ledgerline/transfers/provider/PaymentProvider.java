package dev.ledgerline.transfers.provider;

import io.smallrye.mutiny.Uni;

/**
 * The payment provider as the pipeline sees it, and the seam an adapter implements to plug in a provider
 * whose API is not {@code provider-api.yaml} (docs/provider.md, "Integrating your provider"). {@link ProviderClient}
 * is the adapter for {@code provider-api.yaml}; another adapter replaces it as a CDI alternative.
 *
 * <p>What an implementation must guarantee, whatever the provider underneath calls it:
 * <ul>
 *   <li>{@code send} executes the order at most once per {@link PaymentOrder#reference()} (the provider's
 *       idempotency key), and not at all if the provider applies it after {@link PaymentOrder#notAfter()};</li>
 *   <li>an item is a definitive answer: {@link SendResult#completed()} only when money moved (now or under an
 *       earlier send of the same reference), {@link SendResult#rejected(String)} only when it never will; a
 *       rejection that is final only when it answers the reference's first send (a provider's 400 or 422) is
 *       {@link SendResult#rejected(String, int)} with that status, see {@link SendResult#finalOnlyOnFirstSend()};</li>
 *   <li>a failed {@code Uni} means "unknown" — timeout, 5xx, broken connection, a refusal for lateness, an
 *       answer it cannot read: the payment may or may not have executed, and the service will look it up;</li>
 *   <li>{@code lookup} tells what really happened: completed, rejected, or not found — and "not found" only
 *       for a reference that never executed and, its deadline having passed, never will (within the
 *       provider's stated lookup lag); a failed {@code Uni} again means unknown.</li>
 * </ul>
 * The conformance kit checks these obligations against a provider over HTTP.
 */
public interface PaymentProvider {

    Uni<SendResult> send(PaymentOrder order);

    Uni<LookupResult> lookup(String reference);
}
