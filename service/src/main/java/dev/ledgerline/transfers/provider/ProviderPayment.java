package dev.ledgerline.transfers.provider;

/** The provider's JSON view of a payment (also what the sandbox answers). */
public record ProviderPayment(String reference, String status, String reason, Integer executions) {
}
