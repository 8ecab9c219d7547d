package dev.ledgerline.transfers.events;

import dev.ledgerline.transfers.transfer.TransferEvent;
import dev.ledgerline.transfers.transfer.TransferStatus;

import java.time.OffsetDateTime;
import java.util.UUID;

/** One transition as the feed carries it: the event and what a consumer needs of its transfer. */
public record FeedEvent(FeedCursor position, UUID transferId, TransferEvent event, String principal, long amount,
                        String currency, String destinationIban, String destinationName, String description,
                        OffsetDateTime createdAt) {

    /** Stable and unique: one event per (transfer, version). */
    public String id() {
        return transferId + "." + event.version();
    }

    public TransferStatus toStatus() {
        return event.toStatus();
    }
}
