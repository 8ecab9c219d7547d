package dev.ledgerline.transfers.transfer;

import java.time.OffsetDateTime;
import java.util.UUID;

/**
 * What the API hands the repository to insert: a validated request under one principal and key. {@code id} is random
 * for a new transfer, whose id the inserting statement makes from it and the database's time
 * ({@link TransferRepository#insert}); a transfer re-created after a lost commit keeps the id it had.
 */
public record NewTransfer(
        UUID id,
        String userId,
        String idempotencyKey,
        String requestFingerprint,
        long amount,
        String currency,
        String destinationIban,
        String destinationName,
        String description,
        String providerReference,
        OffsetDateTime executeAt) {
}
