package dev.ledgerline.transfers.webhooks;

import dev.ledgerline.transfers.events.FeedEvent;

/**
 * The body a webhook carries: the event exactly as {@code GET /v1/events} shows it. The JSON view of the feed
 * belongs to the HTTP edge, which provides this (api.WebhookPayloads), so both render one event the same way.
 */
public interface PayloadWriter {

    String json(FeedEvent event);
}
