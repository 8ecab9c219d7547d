package dev.ledgerline.transfers.transfer;

import java.time.OffsetDateTime;
import java.util.UUID;

/**
 * A reconciling transfer taken for a lookup: the version and take token its outcome must be fenced against, how
 * many of its sends the provider refused with an unexplained 4xx, when its first send left (null: never), how
 * many sends it made, and why it is reconciling.
 */
public record Reconcilable(UUID id, long version, UUID token, String providerReference, OffsetDateTime createdAt,
                           int refusedSends, OffsetDateTime firstSentAt, int sends, String reason) {
}
