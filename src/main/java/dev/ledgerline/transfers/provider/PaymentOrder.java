package dev.ledgerline.transfers.provider;

/** What is sent to the provider: the reference is its idempotency key. */
public record PaymentOrder(String reference, long amount, String currency, String iban, String name) {
}
