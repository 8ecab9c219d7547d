package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.transfer.Transfer;

import java.nio.charset.StandardCharsets;
import java.time.OffsetDateTime;
import java.util.Base64;
import java.util.UUID;

/**
 * The keyset cursor of both listings: the position of a page's last row in the listing's order, a timestamp and
 * the row's id — {@code (updated_at, id)} for the operations listing, {@code (created_at, id)} for the caller's
 * own — sent to clients as opaque URL-safe base64. Pages stay stable while rows change and no OFFSET is scanned.
 * Only this service makes cursors; one whose date PostgreSQL cannot hold is no cursor.
 */
record PageCursor(OffsetDateTime at, UUID id) {

    private static final OffsetDateTime BEGINNING = OffsetDateTime.parse("1970-01-01T00:00:00Z");
    private static final OffsetDateTime LATEST = OffsetDateTime.parse("9999-12-31T23:59:59Z");

    /** Before every row of an ascending listing. */
    static final PageCursor LOWEST = new PageCursor(BEGINNING, new UUID(0L, 0L));
    /** Before every row of a descending listing. */
    static final PageCursor HIGHEST = new PageCursor(LATEST, new UUID(-1L, -1L));

    /** Where the operations listing (oldest change first) continues after {@code last}. */
    static PageCursor byUpdate(Transfer last) {
        return new PageCursor(last.updatedAt(), last.id());
    }

    /** Where the caller's own listing (newest first) continues after {@code last}. */
    static PageCursor byCreation(Transfer last) {
        return new PageCursor(last.createdAt(), last.id());
    }

    String encode() {
        String raw = at + "|" + id;
        return Base64.getUrlEncoder().withoutPadding().encodeToString(raw.getBytes(StandardCharsets.UTF_8));
    }

    /** The cursor {@link #encode} made; any other text is an {@link IllegalArgumentException} or another runtime failure. */
    static PageCursor decode(String cursor) {
        String[] parts = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8).split("\\|");
        PageCursor decoded = new PageCursor(OffsetDateTime.parse(parts[0]), UUID.fromString(parts[1]));
        if (decoded.at.isBefore(BEGINNING) || decoded.at.isAfter(LATEST)) {
            throw new IllegalArgumentException("cursor date out of range");
        }
        return decoded;
    }
}
