package dev.ledgerline.transfers.transfer;

import java.util.UUID;

/**
 * One fence ({@link TransferSql#FENCE}, batched by {@link BatchQueue}): write {@code status} over the row at
 * {@code version} that still carries {@code claimToken}, with the fields of its event.
 */
record Fence(UUID id, long version, UUID claimToken, String status, String failureReason, long nextAttemptInMs,
             String actor, String reason, int refused) {
}
