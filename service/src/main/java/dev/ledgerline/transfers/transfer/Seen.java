package dev.ledgerline.transfers.transfer;

import java.util.UUID;

/** A transfer as a caller saw it: the claim succeeds only if the row is still in this status at this version. */
public record Seen(UUID id, TransferStatus status, long version) {
    public Seen {
        if (status != TransferStatus.PENDING && status != TransferStatus.RECONCILING) {
            throw new IllegalArgumentException("only pending or reconciling transfers can be claimed, not " + status);
        }
    }
}
