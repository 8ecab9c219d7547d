package dev.ledgerline.transfers.api;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.ser.std.StdSerializer;

import java.io.IOException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.TimeZone;

/**
 * Writes a transfer's timestamps as Jackson's own serializer writes them here, {@code 2026-12-06T09:30:01.123456Z}
 * (ISO-8601 with the offset, the fraction without trailing zeros, none when it is zero), without its cost: that one
 * builds a formatter for the context's time zone and formats through it on every value, which was most of the JSON
 * time of a new transfer's answer (bench/CPU-AB.md). The fast path takes what PostgreSQL hands back, a UTC offset in
 * years 0–9999, when the mapper writes dates as text in UTC or in no explicit zone; anything else goes to Jackson's
 * serializer, so the text is the same either way ({@code UtcTimestampsTest} compares the two).
 */
final class UtcTimestamps extends StdSerializer<OffsetDateTime> {

    /** A context zone, and whether it is UTC. */
    private record Zone(TimeZone zone, boolean utc) {
    }

    /** The context zone last seen ({@code null}: none yet): a mapper's zone is fixed, so this is decided once. */
    private volatile Zone seen;

    UtcTimestamps() {
        super(OffsetDateTime.class);
    }

    @Override
    public void serialize(OffsetDateTime value, JsonGenerator gen, SerializerProvider provider) throws IOException {
        int year = value.getYear();
        if (value.getOffset().getTotalSeconds() != 0 || year < 0 || year > 9999 || !writesInUtc(provider)) {
            provider.findValueSerializer(OffsetDateTime.class).serialize(value, gen, provider);
            return;
        }
        char[] text = new char[30];
        int n = 0;
        n = digits(text, n, year, 4);
        text[n++] = '-';
        n = digits(text, n, value.getMonthValue(), 2);
        text[n++] = '-';
        n = digits(text, n, value.getDayOfMonth(), 2);
        text[n++] = 'T';
        n = digits(text, n, value.getHour(), 2);
        text[n++] = ':';
        n = digits(text, n, value.getMinute(), 2);
        text[n++] = ':';
        n = digits(text, n, value.getSecond(), 2);
        int nano = value.getNano();
        if (nano != 0) {
            int width = 9;
            while (nano % 10 == 0) {
                nano /= 10;
                width--;
            }
            text[n++] = '.';
            n = digits(text, n, nano, width);
        }
        text[n++] = 'Z';
        gen.writeString(text, 0, n);
    }

    /** Whether Jackson would write this value as text in UTC: no zone of its own to move it to, no number. */
    private boolean writesInUtc(SerializerProvider provider) {
        if (provider.isEnabled(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)) {
            return false;
        }
        if (!provider.getConfig().hasExplicitTimeZone() || !provider.isEnabled(SerializationFeature.WRITE_DATES_WITH_CONTEXT_TIME_ZONE)) {
            return true;
        }
        TimeZone zone = provider.getTimeZone();
        Zone known = seen;
        if (known == null || known.zone() != zone) {
            var rules = zone.toZoneId().getRules();
            known = new Zone(zone, rules.isFixedOffset() && rules.getOffset(Instant.EPOCH).getTotalSeconds() == 0);
            seen = known;
        }
        return known.utc();
    }

    /** {@code value} as exactly {@code width} decimal digits, zero-padded, at {@code at}; the index after them. */
    private static int digits(char[] out, int at, int value, int width) {
        for (int i = at + width - 1; i >= at; i--) {
            out[i] = (char) ('0' + value % 10);
            value /= 10;
        }
        return at + width;
    }
}
