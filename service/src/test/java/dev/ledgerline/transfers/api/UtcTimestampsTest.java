package dev.ledgerline.transfers.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.transfer.TransferRequest;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TimeZone;
import java.util.UUID;

import static dev.ledgerline.transfers.support.Api.as;
import static dev.ledgerline.transfers.support.Api.body;
import static dev.ledgerline.transfers.support.Api.newKey;
import static dev.ledgerline.transfers.support.Api.writer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A transfer's timestamps are written by {@link UtcTimestamps}, not by Jackson's own serializer, and the text must be
 * the same: every kept response, every client parsing them, and the stamp of kept bodies assume it. Each view is
 * written twice, by the mapper as it is and by the same mapper told to ignore {@link TransferViewWriter} (which writes
 * them through {@code UtcTimestamps}), and the two texts compared, for the service's own mapper and for mappers set up
 * otherwise (a context zone, numbers).
 */
@QuarkusTest
class UtcTimestampsTest {

    @Inject
    ObjectMapper mapper;

    @Test
    void theServicesMapperWritesEveryTimestampAsJacksonWould() throws Exception {
        sameTextAsJackson(mapper);
    }

    @Test
    void mappersWithAZoneOrWritingNumbersGetJacksonsTextToo() throws Exception {
        ObjectMapper base = new ObjectMapper().registerModule(new JavaTimeModule())
                .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS);
        sameTextAsJackson(base);
        sameTextAsJackson(base.copy().setTimeZone(TimeZone.getTimeZone("UTC")));
        sameTextAsJackson(base.copy().setTimeZone(TimeZone.getTimeZone("Europe/Berlin")));
        sameTextAsJackson(base.copy().setTimeZone(TimeZone.getTimeZone("Europe/London")));
        sameTextAsJackson(base.copy().setTimeZone(TimeZone.getTimeZone("Europe/Berlin"))
                .disable(SerializationFeature.WRITE_DATES_WITH_CONTEXT_TIME_ZONE));
        sameTextAsJackson(base.copy().enable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS));
    }

    @Test
    void aCreatedTransferAnswersItsRowsTimestampsToTheMicrosecond() {
        String key = newKey();
        String createdAt = as(writer("timestamps")).contentType("application/json").header("Idempotency-Key", key)
                .body(body(10)).post("/v1/transfers").then().statusCode(201).extract().path("createdAt");
        assertTrue(createdAt.endsWith("Z"), createdAt);
        String inDatabase = (String) Db.query("SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US') "
                + "AS at FROM transfers WHERE idempotency_key = ?", key).get(0).get("at");
        assertEquals(OffsetDateTime.parse(inDatabase + "Z"), OffsetDateTime.parse(createdAt));
    }

    private static void sameTextAsJackson(ObjectMapper tested) throws Exception {
        ObjectMapper jacksons = TransferViewWriterTest.jacksonsOwn(tested);
        for (OffsetDateTime at : timestamps()) {
            TransferView view = view(at);
            String ours = tested.writeValueAsString(view);
            assertTrue(ours.contains("\"createdAt\""), ours);
            assertEquals(jacksons.writeValueAsString(view), ours, "for " + at);
        }
        TransferView unscheduled = view(null);
        assertEquals(jacksons.writeValueAsString(unscheduled), tested.writeValueAsString(unscheduled));
    }

    private static TransferView view(OffsetDateTime at) {
        return new TransferView(UUID.randomUUID(), "pending", 1_000, "EUR",
                new TransferRequest.Destination("DE89370400440532013000", "Ada"), null, "ll_ref", 2, null,
                at == null ? OffsetDateTime.now(ZoneOffset.UTC) : at, at == null ? OffsetDateTime.now(ZoneOffset.UTC) : at, at);
    }

    /** Edges (no fraction, one digit, nine, midnight, the year's ends and the fast path's) and random instants. */
    private static List<OffsetDateTime> timestamps() {
        List<OffsetDateTime> all = new ArrayList<>(List.of(
                OffsetDateTime.of(2026, 12, 6, 9, 30, 1, 0, ZoneOffset.UTC),
                OffsetDateTime.of(2026, 12, 6, 0, 0, 0, 0, ZoneOffset.UTC),
                OffsetDateTime.of(2026, 1, 1, 0, 0, 0, 100_000_000, ZoneOffset.UTC),
                OffsetDateTime.of(2026, 12, 31, 23, 59, 59, 999_999_999, ZoneOffset.UTC),
                OffsetDateTime.of(2026, 6, 1, 12, 0, 0, 5, ZoneOffset.UTC),
                OffsetDateTime.of(2026, 6, 1, 12, 0, 0, 123_456_000, ZoneOffset.UTC),
                OffsetDateTime.of(999, 6, 1, 12, 0, 0, 120_000_000, ZoneOffset.UTC),
                OffsetDateTime.of(0, 6, 1, 12, 0, 0, 0, ZoneOffset.UTC),
                OffsetDateTime.of(9999, 12, 31, 23, 59, 59, 1_000, ZoneOffset.UTC),
                OffsetDateTime.of(10_000, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC),
                OffsetDateTime.of(-1, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC),
                OffsetDateTime.of(2026, 3, 29, 1, 30, 0, 250_000_000, ZoneOffset.ofHours(2)),
                OffsetDateTime.of(2026, 3, 29, 1, 30, 0, 0, ZoneOffset.ofHoursMinutesSeconds(-3, -30, -15))));
        Random random = new Random(20261206);
        for (int i = 0; i < 2_000; i++) {
            long second = 946_684_800L + (long) (random.nextDouble() * 3_000_000_000L);
            int nano = switch (i % 4) {
                case 0 -> 0;
                case 1 -> random.nextInt(1_000) * 1_000_000;
                case 2 -> random.nextInt(1_000_000) * 1_000;
                default -> random.nextInt(1_000_000_000);
            };
            ZoneOffset offset = i % 10 == 0 ? ZoneOffset.ofTotalSeconds((random.nextInt(36) - 18) * 1_800) : ZoneOffset.UTC;
            all.add(OffsetDateTime.ofInstant(Instant.ofEpochSecond(second, nano), offset));
        }
        return all;
    }
}
