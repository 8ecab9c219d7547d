package dev.ledgerline.transfers.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.introspect.Annotated;
import com.fasterxml.jackson.databind.introspect.JacksonAnnotationIntrospector;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
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
import java.util.UUID;

import static dev.ledgerline.transfers.support.Api.as;
import static dev.ledgerline.transfers.support.Api.newKey;
import static dev.ledgerline.transfers.support.Api.writer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link TransferViewWriter} writes a transfer's view by hand, and every byte must be the one Jackson's bean serializer
 * writes: kept responses, clients and the contract all read that text. Each view is written by the mapper as it is and
 * by the same mapper told to ignore the writer, and the texts compared: views with every nullable field empty or set,
 * text that needs escaping, the longest numbers; then the answers of a POST and a GET, written on their own paths.
 */
@QuarkusTest
class TransferViewWriterTest {

    @Inject
    ObjectMapper mapper;

    /** {@code tested} as it would write without {@link TransferViewWriter}: Jackson's bean serializer, its own timestamps. */
    static ObjectMapper jacksonsOwn(ObjectMapper tested) {
        return tested.copy().setAnnotationIntrospector(new JacksonAnnotationIntrospector() {
            @Override
            public Object findSerializer(Annotated a) {
                Object serializer = super.findSerializer(a);
                return serializer == TransferViewWriter.class ? null : serializer;
            }
        });
    }

    @Test
    void theServicesMapperWritesAViewWithTheWriter() throws Exception {
        assertInstanceOf(TransferViewWriter.class,
                mapper.getSerializerProviderInstance().findValueSerializer(TransferView.class));
    }

    @Test
    void everyViewReadsAsJacksonWouldWriteIt() throws Exception {
        ObjectMapper plain = new ObjectMapper().registerModule(new JavaTimeModule())
                .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS);
        for (ObjectMapper tested : List.of(mapper, mapper.copy().enable(SerializationFeature.INDENT_OUTPUT), plain)) {
            ObjectMapper jacksons = jacksonsOwn(tested);
            for (TransferView view : views()) {
                String ours = tested.writeValueAsString(view);
                assertEquals(jacksons.writeValueAsString(view), ours);
                assertEquals(jacksons.writeValueAsString(List.of(view, view)), tested.writeValueAsString(List.of(view, view)));
            }
        }
    }

    @Test
    void aCreatedAndAReadTransferAnswerJacksonsText() throws Exception {
        String key = newKey();
        String body = "{\"amount\":4321,\"currency\":\"EUR\",\"destination\":{\"iban\":\"DE89370400440532013000\","
                + "\"name\":\"Zo\\u00eb \\\"Q\\\" O'Brien\"},\"description\":\"back\\\\slash, \\u20ac, \\\"quoted\\\"\"}";
        String created = as(writer("view-writer")).contentType("application/json").header("Idempotency-Key", key)
                .body(body).post("/v1/transfers").then().statusCode(201).extract().asString();
        String id = mapper.readTree(created).get("id").asText();
        String read = as(writer("view-writer")).get("/v1/transfers/" + id).then().statusCode(200).extract().asString();
        ObjectMapper jacksons = jacksonsOwn(mapper);
        for (String answer : List.of(created, read)) {
            TransferView view = mapper.readValue(answer, TransferView.class);
            assertEquals("Zoë \"Q\" O'Brien", view.destination().name());
            assertEquals(jacksons.writeValueAsString(view), answer);
        }
    }

    /** Views with each nullable field empty in turn, escapes, non-ASCII text, extreme numbers, random instants. */
    private static List<TransferView> views() {
        OffsetDateTime at = OffsetDateTime.of(2026, 12, 6, 9, 30, 1, 120_000_000, ZoneOffset.UTC);
        TransferRequest.Destination ada = new TransferRequest.Destination("DE89370400440532013000", "Ada");
        List<TransferView> all = new ArrayList<>(List.of(
                new TransferView(UUID.randomUUID(), "pending", 1, "EUR", ada, null, null, 1, null, at, at, null),
                new TransferView(UUID.randomUUID(), "sent", Long.MAX_VALUE, "GBP", ada, "rent", "ll_ref", Long.MAX_VALUE,
                        null, at, at, at),
                new TransferView(UUID.randomUUID(), "failed", Long.MIN_VALUE, "USD", ada, "", "", 0, "rejected", at, at, at),
                new TransferView(null, null, 0, null, null, null, null, -1, null, null, null, null),
                new TransferView(UUID.randomUUID(), "pending", 7, "EUR", new TransferRequest.Destination(null, null),
                        "quote \" backslash \\ slash / nul \u0000 bell \u0007 del \u007f", "ref\u2028line",
                        2, "Zoë 😀 \u202e", at, at, at)));
        Random random = new Random(20261206);
        for (int i = 0; i < 500; i++) {
            OffsetDateTime when = OffsetDateTime.ofInstant(
                    Instant.ofEpochSecond(946_684_800L + random.nextInt(1_500_000_000), random.nextInt(1_000_000) * 1_000), ZoneOffset.UTC);
            all.add(new TransferView(UUID.randomUUID(), i % 2 == 0 ? "processing" : "reconciling", random.nextLong(),
                    "EUR", new TransferRequest.Destination("NL91ABNA0417164300", text(random)),
                    i % 3 == 0 ? null : text(random), i % 5 == 0 ? null : text(random), random.nextLong(),
                    i % 7 == 0 ? text(random) : null, when, when.plusNanos(random.nextInt(1_000_000)),
                    i % 4 == 0 ? when.plusDays(1) : null));
        }
        return all;
    }

    /** Up to 40 characters from ASCII (controls included), Latin-1, the BMP and beyond it. */
    private static String text(Random random) {
        StringBuilder out = new StringBuilder();
        int n = random.nextInt(41);
        for (int i = 0; i < n; i++) {
            switch (random.nextInt(4)) {
                case 0 -> out.append((char) random.nextInt(0x80));
                case 1 -> out.append((char) (0x80 + random.nextInt(0x180)));
                case 2 -> out.append((char) (0x800 + random.nextInt(0xD000)));
                default -> out.appendCodePoint(0x1F300 + random.nextInt(0x300));
            }
        }
        return out.toString();
    }
}
