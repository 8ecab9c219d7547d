package dev.ledgerline.transfers.webhooks;

import dev.ledgerline.transfers.events.FeedCursor;

import java.time.OffsetDateTime;
import java.util.UUID;

/**
 * An endpoint this instance holds: every write that follows matches {@code token}. {@code attempts} are the failed
 * attempts so far at the event after {@code cursor}; {@code localDeadline} is when the lease ends by this
 * instance's monotonic clock, read before the lease was written, so never later than the database's expiry.
 * {@code previousSecret}: the secret a rotation replaced while it still signs beside {@code secret}, else {@code null}.
 */
record Lease(UUID id, String url, String secret, String previousSecret, UUID token, FeedCursor cursor, int attempts,
             OffsetDateTime failingSince, boolean failing, long localDeadline) {

    Lease renewed(FeedCursor next, long deadline) {
        return new Lease(id, url, secret, previousSecret, token, next, 0, null, false, deadline);
    }
}
