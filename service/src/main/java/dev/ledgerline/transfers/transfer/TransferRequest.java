package dev.ledgerline.transfers.transfer;

import java.time.Duration;
import java.time.OffsetDateTime;

/**
 * A validated, normalised {@code POST /v1/transfers} body; {@code executeAt} is {@code null} for "at once", else the
 * future instant before which nothing is claimed or sent.
 */
public record TransferRequest(long amount, String currency, Destination destination, String description,
                              OffsetDateTime executeAt) {

    /** How far ahead a transfer may be scheduled. */
    public static final Duration MAX_SCHEDULE_AHEAD = Duration.ofDays(365);

    /** A transfer sent at once. */
    public TransferRequest(long amount, String currency, Destination destination, String description) {
        this(amount, currency, destination, description, null);
    }

    public record Destination(String iban, String name) {
    }
}
