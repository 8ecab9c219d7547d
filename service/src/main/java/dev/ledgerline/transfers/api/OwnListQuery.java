package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.problem.Problem;
import dev.ledgerline.transfers.transfer.TransferStatus;

import java.util.ArrayList;
import java.util.List;

/**
 * The parameters of {@code GET /v1/me/transfers}, validated with the rules of {@link ListQuery}: an optional status,
 * the page size, and the {@link PageCursor} over {@code (created_at, id)}, newest first.
 */
record OwnListQuery(TransferStatus status, PageCursor after, int limit) {

    static OwnListQuery parse(String status, String limit, String after, int maxLimit) {
        List<Problem.FieldError> errors = new ArrayList<>();
        TransferStatus s = ListQuery.status(status, errors);
        int n = ListQuery.limit(limit, maxLimit, errors);
        PageCursor cursor = ListQuery.cursor(after, PageCursor.HIGHEST, errors);
        ListQuery.refuseIfAny(errors);
        return new OwnListQuery(s, cursor, n);
    }
}
