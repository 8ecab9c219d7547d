package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.transfer.TransferEvent;

import java.time.OffsetDateTime;
import java.util.List;
import java.util.UUID;

/** The transition history of one transfer (openapi.yaml {@code TransferEvents}). */
public record TransferEventsView(UUID transferId, List<Event> events) {

    public record Event(long version, String fromStatus, String toStatus, String actor, String reason, OffsetDateTime at) {
    }

    static TransferEventsView of(UUID id, List<TransferEvent> events) {
        return new TransferEventsView(id, events.stream()
                .map(e -> new Event(e.version(), e.fromStatus() == null ? null : e.fromStatus().db(), e.toStatus().db(),
                        e.actor(), e.reason(), e.at()))
                .toList());
    }
}
