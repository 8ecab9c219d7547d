package dev.ledgerline.transfers.provider;

import java.time.Instant;

/**
 * What is sent to the provider: the reference is its idempotency key, {@code notAfter} the moment after
 * which the provider must not execute it (the sender's lease end, less the clock margin).
 */
public record PaymentOrder(String reference, long amount, String currency, String iban, String name,
                           Instant notAfter) {
}
