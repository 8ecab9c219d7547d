package dev.ledgerline.transfers.provider;

import jakarta.ws.rs.client.ClientRequestContext;
import jakarta.ws.rs.client.ClientRequestFilter;

import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;

/**
 * The last check before a send leaves the process: a send whose {@code Ledgerline-Not-After} deadline has
 * already passed is not written. SmallRye Fault Tolerance applies {@code @Timeout} outside {@code @Bulkhead}, so
 * a send queued in the bulkhead stays queued after its caller gave up and would otherwise leave later; checking
 * here, as the request is built for the wire, keeps it in. The provider enforces the same deadline on arrival:
 * this filter only spares it sends that are certain to be refused, and providers that ignore the header.
 */
public class DeadlineFilter implements ClientRequestFilter {

    /** Nanoseconds per unit of a fraction of k digits, at k (1 to 9). */
    private static final long[] SCALE = {0, 100_000_000, 10_000_000, 1_000_000, 100_000, 10_000, 1_000, 100, 10, 1};

    @Override
    public void filter(ClientRequestContext request) {
        String notAfter = request.getHeaderString(ProviderRestClient.NOT_AFTER);
        if (notAfter != null && Instant.now().isAfter(parse(notAfter))) {
            throw new SendNotWrittenException("the send's deadline " + notAfter + " passed before it was written");
        }
    }

    /**
     * The deadline as {@link ProviderClient} writes it ({@link Instant#toString()}: {@code 2026-12-05T14:47:31.5Z}, a
     * fraction of up to nine digits or none) read by hand, which costs a fraction of {@code DateTimeFormatter}'s
     * parse on every send; any other RFC 3339 form through {@link OffsetDateTime#parse}.
     */
    static Instant parse(String text) {
        int n = text.length();
        if (n >= 20 && n <= 30 && text.charAt(4) == '-' && text.charAt(7) == '-' && text.charAt(10) == 'T'
                && text.charAt(13) == ':' && text.charAt(16) == ':' && text.charAt(n - 1) == 'Z'
                && (n == 20 || (text.charAt(19) == '.' && n > 21))) {
            int year = digits(text, 0, 4);
            int month = digits(text, 5, 7);
            int day = digits(text, 8, 10);
            int hour = digits(text, 11, 13);
            int minute = digits(text, 14, 16);
            int second = digits(text, 17, 19);
            int fraction = n == 20 ? 0 : digits(text, 20, n - 1);
            if (year >= 0 && month >= 0 && day >= 0 && hour >= 0 && hour < 24 && minute >= 0 && minute < 60
                    && second >= 0 && second < 60 && fraction >= 0) {
                try {
                    long seconds = LocalDate.of(year, month, day).toEpochDay() * 86_400L + hour * 3_600L + minute * 60L
                            + second;
                    return Instant.ofEpochSecond(seconds, n == 20 ? 0 : fraction * SCALE[n - 21]);
                } catch (DateTimeException notADate) {
                    // February 30th and the like: the formatter says what is wrong
                }
            }
        }
        return OffsetDateTime.parse(text).toInstant();
    }

    /** The decimal number in {@code text[from, to)}, or -1 when a character there is not a digit. */
    private static int digits(String text, int from, int to) {
        int value = 0;
        for (int i = from; i < to; i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            value = value * 10 + (c - '0');
        }
        return value;
    }
}
