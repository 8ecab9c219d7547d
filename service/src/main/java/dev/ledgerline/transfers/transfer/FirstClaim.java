package dev.ledgerline.transfers.transfer;

import java.time.Duration;

/**
 * The claim a new transfer's INSERT takes for its accepting instance ({@link TransferRepository#insertClaimed}): the
 * worker it is claimed for, its lease, the reason its event records, and when it was asked for
 * ({@link System#nanoTime()}, before the statement left: the lease is counted from no later than that).
 */
public record FirstClaim(String worker, Duration lease, String reason, long askedAt) {
}
