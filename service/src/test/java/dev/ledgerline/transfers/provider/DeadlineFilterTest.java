package dev.ledgerline.transfers.provider;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The deadline read by hand is the instant {@link OffsetDateTime#parse} reads, whatever the text. */
class DeadlineFilterTest {

    @Test
    void everyInstantAsTheClientWritesItReadsBackExactly() {
        SplittableRandom random = new SplittableRandom(20261205);
        for (int i = 0; i < 100_000; i++) {
            long seconds = random.nextLong(Instant.parse("1970-01-01T00:00:00Z").getEpochSecond(),
                    Instant.parse("9999-12-31T23:59:59Z").getEpochSecond());
            // whole seconds, milliseconds, microseconds and nanoseconds: Instant.toString writes 0, 3, 6 or 9 digits
            long nanos = switch (i % 4) {
                case 0 -> 0;
                case 1 -> random.nextInt(1_000) * 1_000_000L;
                case 2 -> random.nextInt(1_000_000) * 1_000L;
                default -> random.nextInt(1_000_000_000);
            };
            Instant instant = Instant.ofEpochSecond(seconds, nanos);
            assertEquals(instant, DeadlineFilter.parse(instant.toString()), instant.toString());
        }
    }

    @Test
    void otherFormsGoThroughTheFormatter() {
        for (String text : new String[] {"2026-12-05T14:47:31.5Z", "2026-12-05T14:47:31.12Z", "2026-12-05T14:47:31.1234Z",
                "2026-12-05T15:47:31.5+01:00", "2026-12-05T14:47:31z", "2026-12-05T14:47:31.Z", "2024-02-29T00:00:00Z"}) {
            assertEquals(OffsetDateTime.parse(text).toInstant(), DeadlineFilter.parse(text), text);
        }
        for (String text : new String[] {"2026-02-30T00:00:00Z", "2026-12-05T24:00:00Z", "2026-12-05T14:47:3xZ",
                "2026-13-05T14:47:31Z", "2026-12-05 14:47:31Z", "+2026-12-05T14:47:31Z"}) {
            assertThrows(DateTimeParseException.class, () -> DeadlineFilter.parse(text), text);
        }
    }
}
