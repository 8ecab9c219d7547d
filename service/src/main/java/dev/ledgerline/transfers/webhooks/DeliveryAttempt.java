package dev.ledgerline.transfers.webhooks;

import java.time.OffsetDateTime;

/**
 * One attempt to deliver one event: the endpoint's status code ({@code null} when none came: refused connection,
 * timeout, refused address), how long it took, and what went wrong (bounded).
 */
public record DeliveryAttempt(String eventId, int attempt, Integer statusCode, long latencyMs, String error,
                              OffsetDateTime at) {

    /** The longest error text kept (the column's bound). */
    public static final int MAX_ERROR = 512;

    static String bound(String error) {
        if (error == null) {
            return null;
        }
        String clean = error.replaceAll("[\\p{Cntrl}&&[^\\t]]", " ");
        return clean.length() <= MAX_ERROR ? clean : clean.substring(0, MAX_ERROR - 1) + "…";
    }
}
