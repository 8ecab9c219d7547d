package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.transfer.TransferEvent;
import dev.ledgerline.transfers.transfer.TransferStatus;

import java.time.OffsetDateTime;
import java.util.List;
import java.util.UUID;

/**
 * The transition history of one transfer (openapi.yaml {@code TransferEvents}). {@code actor} is the role
 * that made the change — {@code api}, {@code worker}, {@code sweeper}, {@code reconciler} or {@code owner} — never the
 * instance: the stored actor is a host name and process id, which is for operators (logs, the
 * {@code transfer_events} table), not for the clients reading their history.
 */
public record TransferEventsView(UUID transferId, List<Event> events) {

    public record Event(long version, String fromStatus, String toStatus, String actor, String reason, OffsetDateTime at) {
    }

    static TransferEventsView of(UUID id, List<TransferEvent> events) {
        return new TransferEventsView(id, events.stream()
                .map(e -> new Event(e.version(), e.fromStatus() == null ? null : e.fromStatus().db(), e.toStatus().db(),
                        role(e), e.reason(), e.at()))
                .toList());
    }

    /** Who made a change, told from what it was: the reasons are the pipeline's own (pipeline/*). */
    static String role(TransferEvent e) {
        String reason = e.reason() == null ? "" : e.reason();
        if (e.fromStatus() == null) {
            return "api";
        }
        if (e.toStatus() == TransferStatus.CANCELLED) {
            return "owner";
        }
        if (reason.startsWith("lookup")) {
            return "reconciler";
        }
        if (reason.startsWith("swept") || reason.equals("lease expired")) {
            return "sweeper";
        }
        return "worker";
    }
}
