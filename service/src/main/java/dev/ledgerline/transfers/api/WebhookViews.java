package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.webhooks.DeliveryAttempt;
import dev.ledgerline.transfers.webhooks.WebhookEndpoint;

import java.time.OffsetDateTime;
import java.util.List;
import java.util.UUID;

/** The JSON of the webhook endpoints (openapi.yaml {@code WebhookEndpoint*}, {@code WebhookDelivery*}). */
public final class WebhookViews {

    private WebhookViews() {
    }

    /** The answer to the POST: the only time the secret is shown. */
    public record Created(UUID id, String url, String description, String secret, OffsetDateTime createdAt) {
    }

    /** The answer to a rotation: the new secret, shown this once, and when the replaced one stops signing. */
    public record SecretRotated(UUID id, String secret, OffsetDateTime previousSecretExpiresAt) {
    }

    /** An endpoint as listed; {@code failingSince} is when the event it is stuck on first failed ({@code null}: none). */
    public record Endpoint(UUID id, String url, String description, OffsetDateTime createdAt, boolean failing,
                           OffsetDateTime failingSince) {
        static Endpoint of(WebhookEndpoint e) {
            return new Endpoint(e.id(), e.url(), e.description(), e.createdAt(), e.failing(), e.failingSince());
        }
    }

    public record EndpointList(List<Endpoint> items) {
    }

    public record Delivery(String eventId, int attempt, Integer statusCode, long latencyMs, String error, OffsetDateTime at) {
        static Delivery of(DeliveryAttempt a) {
            return new Delivery(a.eventId(), a.attempt(), a.statusCode(), a.latencyMs(), a.error(), a.at());
        }
    }

    public record DeliveryList(List<Delivery> items) {
    }
}
