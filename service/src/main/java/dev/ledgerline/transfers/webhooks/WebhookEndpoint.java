package dev.ledgerline.transfers.webhooks;

import java.time.OffsetDateTime;
import java.util.UUID;

/** A registered endpoint, without its secret. {@code failing}: one event has failed for longer than give-up-after. */
public record WebhookEndpoint(UUID id, String url, String description, OffsetDateTime createdAt, boolean failing,
                              OffsetDateTime failingSince) {
}
