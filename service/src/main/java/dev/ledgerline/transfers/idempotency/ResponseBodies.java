package dev.ledgerline.transfers.idempotency;

import dev.ledgerline.transfers.transfer.Transfer;

/**
 * How a transfer is written as the response body of a POST, for the final entries a replay answers from
 * ({@link IdempotencyEntry}); implemented where the HTTP representation lives. Its {@link #stamp} names the request
 * rules and the response shape of this build: an entry kept under another stamp (a release that validates or
 * answers differently) is neither compared byte for byte nor answered from as it is.
 */
public interface ResponseBodies {

    /** The request rules and the response shape this build applies, as one short text (no {@code |} needed). */
    String stamp();

    /** The body a client gets for {@code transfer}, as UTF-8 JSON text. */
    String of(Transfer transfer);
}
