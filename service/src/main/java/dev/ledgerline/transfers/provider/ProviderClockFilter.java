package dev.ledgerline.transfers.provider;

import jakarta.annotation.Priority;
import jakarta.inject.Inject;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.client.ClientRequestContext;
import jakarta.ws.rs.client.ClientRequestFilter;
import jakarta.ws.rs.client.ClientResponseContext;
import jakarta.ws.rs.client.ClientResponseFilter;
import jakarta.ws.rs.core.HttpHeaders;

import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;

/**
 * Reads the provider's clock off every answer to a send or a lookup: notes when the request leaves, and hands
 * the answer's {@code Date} header and the round trip to {@link ProviderClock}. An answer without a readable
 * {@code Date} is simply not a sample. Runs last among the request filters, after {@link DeadlineFilter}, so the
 * round trip starts as close to the wire as a filter can see.
 */
@Priority(Priorities.USER + 1000)
public class ProviderClockFilter implements ClientRequestFilter, ClientResponseFilter {

    private static final String SENT_AT = ProviderClockFilter.class.getName() + ".sentAt";
    private static final String SENT_NANOS = ProviderClockFilter.class.getName() + ".sentNanos";

    @Inject
    ProviderClock clock;

    @Override
    public void filter(ClientRequestContext request) {
        request.setProperty(SENT_AT, Instant.now());
        request.setProperty(SENT_NANOS, System.nanoTime());
    }

    @Override
    public void filter(ClientRequestContext request, ClientResponseContext response) {
        long received = System.nanoTime();
        if (!(request.getProperty(SENT_AT) instanceof Instant sentAt) || !(request.getProperty(SENT_NANOS) instanceof Long sentNanos)) {
            return;
        }
        Instant date = parse(response.getHeaderString(HttpHeaders.DATE));
        if (date != null) {
            clock.record(date, sentAt, Duration.ofNanos(received - sentNanos));
        }
    }

    /** An HTTP date (IMF-fixdate, or its RFC 1123 cousins), or {@code null}. */
    static Instant parse(String header) {
        if (header == null || header.isBlank()) {
            return null;
        }
        try {
            return ZonedDateTime.parse(header.trim(), DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
        } catch (DateTimeParseException unreadable) {
            return null;
        }
    }
}
