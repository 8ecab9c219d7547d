package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.problem.Problem;
import dev.ledgerline.transfers.problem.ProblemException;
import dev.ledgerline.transfers.problem.ProblemType;
import dev.ledgerline.transfers.transfer.Transfer;
import dev.ledgerline.transfers.transfer.TransferStatus;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;

/**
 * The parameters of {@code GET /v1/transfers}, validated, with the keyset cursor: an opaque token of the
 * last row's {@code (updated_at, id)}, so pages stay stable while rows change and no OFFSET is scanned.
 */
record ListQuery(TransferStatus status, Duration olderThan, OffsetDateTime afterUpdatedAt, UUID afterId, int limit) {

    static final int DEFAULT_LIMIT = 50;
    private static final OffsetDateTime BEGINNING = OffsetDateTime.parse("1970-01-01T00:00:00Z");
    private static final UUID LOWEST = new UUID(0L, 0L);
    /**
     * The oldest age a listing asks about: ten years, far beyond any transfer still open. Larger values are
     * refused rather than passed on, since subtracting them from the clock overflows (the answer was a 500).
     */
    static final Duration MAX_OLDER_THAN = Duration.ofDays(3650);
    private static final OffsetDateTime LATEST_CURSOR = OffsetDateTime.parse("9999-12-31T23:59:59Z");

    static ListQuery parse(String status, String olderThan, String limit, String after, int maxLimit) {
        List<Problem.FieldError> errors = new ArrayList<>();
        TransferStatus s = null;
        if (status != null) {
            try {
                s = TransferStatus.valueOf(status.toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                errors.add(new Problem.FieldError("status", "must be one of pending, processing, sent, failed, reconciling"));
            }
        }
        Duration age = Duration.ZERO;
        if (olderThan != null) {
            try {
                age = Duration.parse(olderThan);
                if (age.isNegative()) {
                    errors.add(new Problem.FieldError("olderThan", "must not be negative"));
                } else if (age.compareTo(MAX_OLDER_THAN) > 0) {
                    errors.add(new Problem.FieldError("olderThan", "must be at most " + MAX_OLDER_THAN.toDays() + " days (P"
                            + MAX_OLDER_THAN.toDays() + "D)"));
                }
            } catch (DateTimeParseException | ArithmeticException e) {
                errors.add(new Problem.FieldError("olderThan", "must be an ISO 8601 duration such as PT5M"));
            }
        }
        int n = DEFAULT_LIMIT;
        if (limit != null) {
            try {
                n = Integer.parseInt(limit);
            } catch (NumberFormatException e) {
                n = -1;
            }
            if (n < 1 || n > maxLimit) {
                errors.add(new Problem.FieldError("limit", "must be a whole number from 1 to " + maxLimit));
            }
        }
        OffsetDateTime afterUpdatedAt = BEGINNING;
        UUID afterId = LOWEST;
        if (after != null) {
            try {
                String[] parts = new String(Base64.getUrlDecoder().decode(after), StandardCharsets.UTF_8).split("\\|");
                afterUpdatedAt = OffsetDateTime.parse(parts[0]);
                afterId = UUID.fromString(parts[1]);
                // only this service makes cursors; a hand-made one with a date PostgreSQL cannot hold is no cursor
                if (afterUpdatedAt.isBefore(BEGINNING) || afterUpdatedAt.isAfter(LATEST_CURSOR)) {
                    throw new IllegalArgumentException("cursor date out of range");
                }
            } catch (RuntimeException e) {
                errors.add(new Problem.FieldError("after", "must be a nextCursor from a previous page"));
            }
        }
        if (!errors.isEmpty()) {
            throw new ProblemException(ProblemType.VALIDATION_FAILED, "The listing parameters are not valid.", errors, Map.of());
        }
        return new ListQuery(s, age, afterUpdatedAt, afterId, n);
    }

    static String cursor(Transfer last) {
        String raw = last.updatedAt() + "|" + last.id();
        return Base64.getUrlEncoder().withoutPadding().encodeToString(raw.getBytes(StandardCharsets.UTF_8));
    }
}
