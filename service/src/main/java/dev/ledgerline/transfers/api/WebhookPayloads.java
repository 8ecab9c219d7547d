package dev.ledgerline.transfers.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledgerline.transfers.events.FeedEvent;
import dev.ledgerline.transfers.webhooks.PayloadWriter;
import jakarta.enterprise.context.ApplicationScoped;

/** A webhook's body: the event as {@code GET /v1/events} renders it (openapi.yaml {@code FeedEvent}), with the same mapper. */
@ApplicationScoped
public class WebhookPayloads implements PayloadWriter {

    private final ObjectMapper mapper;

    public WebhookPayloads(ObjectMapper mapper) {
        this.mapper = mapper;
    }

    @Override
    public String json(FeedEvent event) {
        try {
            return mapper.writeValueAsString(EventPage.event(event));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a feed event always renders", e);
        }
    }
}
