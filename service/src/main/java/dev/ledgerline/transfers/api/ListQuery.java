package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.idempotency.IdempotencyKey;
import dev.ledgerline.transfers.problem.Problem;
import dev.ledgerline.transfers.problem.ProblemException;
import dev.ledgerline.transfers.problem.ProblemType;
import dev.ledgerline.transfers.transfer.TransferStatus;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The parameters of {@code GET /v1/transfers}, validated: the operations listing's status, age, page size and
 * {@link PageCursor} over {@code (updated_at, id)}, or the lookup by {@code idempotencyKey}, which takes no other
 * parameter. The status, page size and cursor rules are shared with {@link OwnListQuery}.
 */
record ListQuery(TransferStatus status, Duration olderThan, PageCursor after, int limit) {

    static final int DEFAULT_LIMIT = 50;
    /**
     * The oldest age a listing asks about: ten years, far beyond any transfer still open. Larger values are
     * refused rather than passed on, since subtracting them from the clock overflows (the answer was a 500).
     */
    static final Duration MAX_OLDER_THAN = Duration.ofDays(3650);

    static ListQuery parse(String status, String olderThan, String limit, String after, int maxLimit) {
        List<Problem.FieldError> errors = new ArrayList<>();
        TransferStatus s = status(status, errors);
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
        int n = limit(limit, maxLimit, errors);
        PageCursor cursor = cursor(after, PageCursor.LOWEST, errors);
        refuseIfAny(errors);
        return new ListQuery(s, age, cursor, n);
    }

    /**
     * The key of {@code ?idempotencyKey=}: the {@code Idempotency-Key} header's rules and forms. A lookup names one
     * transfer, so the listing's parameters next to it are refused rather than silently ignored.
     */
    static IdempotencyKey key(String idempotencyKey, String status, String olderThan, String limit, String after) {
        List<Problem.FieldError> errors = new ArrayList<>();
        IdempotencyKey key = null;
        try {
            key = IdempotencyKey.of(idempotencyKey);
        } catch (IllegalArgumentException e) {
            errors.add(new Problem.FieldError("idempotencyKey", "is not a valid Idempotency-Key: " + e.getMessage()));
        }
        notWithKey("status", status, errors);
        notWithKey("olderThan", olderThan, errors);
        notWithKey("limit", limit, errors);
        notWithKey("after", after, errors);
        refuseIfAny(errors);
        return key;
    }

    private static void notWithKey(String name, String value, List<Problem.FieldError> errors) {
        if (value != null) {
            errors.add(new Problem.FieldError(name, "must not be combined with idempotencyKey"));
        }
    }

    static TransferStatus status(String status, List<Problem.FieldError> errors) {
        if (status == null) {
            return null;
        }
        try {
            return TransferStatus.valueOf(status.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            errors.add(new Problem.FieldError("status", "must be one of pending, processing, sent, failed, reconciling, cancelled"));
            return null;
        }
    }

    static int limit(String limit, int maxLimit, List<Problem.FieldError> errors) {
        return limit(limit, DEFAULT_LIMIT, maxLimit, errors);
    }

    /** {@code limit} as a page size from 1 to {@code maxLimit}, {@code defaultLimit} when absent; a bad one adds an error. */
    static int limit(String limit, int defaultLimit, int maxLimit, List<Problem.FieldError> errors) {
        if (limit == null) {
            return defaultLimit;
        }
        int n;
        try {
            n = Integer.parseInt(limit);
        } catch (NumberFormatException e) {
            n = -1;
        }
        if (n < 1 || n > maxLimit) {
            errors.add(new Problem.FieldError("limit", "must be a whole number from 1 to " + maxLimit));
        }
        return n;
    }

    /** The cursor in {@code after}, or {@code first} (before every row) without one. */
    static PageCursor cursor(String after, PageCursor first, List<Problem.FieldError> errors) {
        if (after == null) {
            return first;
        }
        try {
            return PageCursor.decode(after);
        } catch (RuntimeException e) {
            errors.add(new Problem.FieldError("after", "must be a nextCursor from a previous page"));
            return first;
        }
    }

    static void refuseIfAny(List<Problem.FieldError> errors) {
        if (!errors.isEmpty()) {
            throw new ProblemException(ProblemType.VALIDATION_FAILED, "The listing parameters are not valid.", errors, Map.of());
        }
    }
}
