package dev.ledgerline.transfers.events;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import java.util.UUID;

/**
 * A position in the event feed: the last event a follower has seen, by the feed's order ({@code feed_xid},
 * transfer, version), and when that event happened, so that a cursor older than the feed keeps is refused, never
 * silently moved forward. Opaque to clients: base64url of {@code 1.<feed_xid>.<transfer id>.<version>.<epoch ms>}.
 */
public record FeedCursor(long feedXid, UUID transferId, long version, Instant at) {

    /** Before every event. */
    static final FeedCursor START = new FeedCursor(0, new UUID(0, 0), -1, null);

    public String encode() {
        String plain = "1." + feedXid + "." + transferId + "." + version + "." + at.toEpochMilli();
        return Base64.getUrlEncoder().withoutPadding().encodeToString(plain.getBytes(StandardCharsets.US_ASCII));
    }

    /** The cursor a client sent back; {@link IllegalArgumentException} for anything this service did not issue. */
    public static FeedCursor decode(String cursor) {
        try {
            String plain = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.US_ASCII);
            String[] parts = plain.split("\\.");
            if (parts.length != 5 || !parts[0].equals("1")) {
                throw new IllegalArgumentException("not a feed cursor");
            }
            long xid = Long.parseLong(parts[1]);
            long version = Long.parseLong(parts[3]);
            if (xid < 0 || version < 0) {
                throw new IllegalArgumentException("not a feed cursor");
            }
            return new FeedCursor(xid, UUID.fromString(parts[2]), version, Instant.ofEpochMilli(Long.parseLong(parts[4])));
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("after is not a cursor this feed issued", e);
        }
    }
}
