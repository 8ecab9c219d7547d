package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.events.EventFeed;
import dev.ledgerline.transfers.events.FeedEvent;
import dev.ledgerline.transfers.transfer.TransferRequest;

import java.time.OffsetDateTime;
import java.util.List;
import java.util.UUID;

/**
 * One page of the event feed (openapi.yaml {@code EventPage}); {@code nextCursor} is where to ask next, also when
 * the page is empty (then it is the cursor asked with, {@code null} before any event exists).
 */
public record EventPage(List<Event> events, String nextCursor) {

    /** One transition and the transfer's fields a consumer needs without calling back (openapi.yaml {@code FeedEvent}). */
    public record Event(String id, UUID transferId, long version, String fromStatus, String toStatus, OffsetDateTime at,
                        String actor, String reason, String principal, long amount, String currency,
                        TransferRequest.Destination destination, String description, OffsetDateTime createdAt) {
    }

    static EventPage of(EventFeed.Page page) {
        return new EventPage(page.events().stream().map(EventPage::event).toList(),
                page.next() == null ? null : page.next().encode());
    }

    static Event event(FeedEvent e) {
        var ev = e.event();
        return new Event(e.id(), e.transferId(), ev.version(), ev.fromStatus() == null ? null : ev.fromStatus().db(),
                ev.toStatus().db(), ev.at(), TransferEventsView.role(ev), ev.reason(), e.principal(), e.amount(), e.currency(),
                new TransferRequest.Destination(e.destinationIban(), e.destinationName()), e.description(), e.createdAt());
    }
}
