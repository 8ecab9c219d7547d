package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.problem.ProblemException;
import dev.ledgerline.transfers.transfer.TransferRequest;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A plain request is read from its tokens ({@link TransferRequestParser#plain}) rather than from a tree of the body:
 * both ways must give the same request for every body the token reader takes, and the token reader must take none
 * that the tree refuses. Thousands of bodies built from valid and invalid values of every field, in any order, with
 * duplicates, unknown fields, wrong types and trailing content, each read both ways.
 */
@QuarkusTest
class TransferRequestParserTest {

    private static final String IBAN = "\"DE89370400440532013000\"";
    private static final String SOON = "\"" + Instant.now().plus(30, ChronoUnit.DAYS).truncatedTo(ChronoUnit.SECONDS) + "\"";

    private static final String[] AMOUNTS = {"1", "12345", "100000000", "100000001", "0", "-5", "1.5", "1e3", "\"100\"",
            "null", "99999999999999999999", "true"};
    private static final String[] CURRENCIES = {"\"EUR\"", "\"GBP\"", "\"eur\"", "\"XXX\"", "5", "null", "\"\""};
    private static final String[] DESTINATIONS = {
            "{\"iban\":" + IBAN + ",\"name\":\"Ada Lovelace\"}",
            "{\"name\":\"Ada\",\"iban\":\"de89 3704 0044 0532 0130 00\"}",
            "{\"iban\":\"DE89370400440532013001\",\"name\":\"Ada\"}",
            "{\"iban\":" + IBAN + ",\"name\":\"  \"}",
            "{\"iban\":" + IBAN + ",\"name\":\"Zo\\u0065\\u0301\"}",
            "{\"iban\":" + IBAN + ",\"name\":\"Eve\\u202e\"}",
            "{\"iban\":" + IBAN + ",\"name\":\"Ada\",\"bic\":\"X\"}",
            "{\"iban\":" + IBAN + ",\"name\":\"Ada\",\"Name\":\"X\"}",
            "{\"iban\":" + IBAN + ",\"name\":\"Ada\",\"name\":\"Eve\"}",
            "{\"iban\":" + IBAN + "}",
            "{\"iban\":" + IBAN + ",\"name\":null}",
            "{\"iban\":5,\"name\":\"Ada\"}",
            "{}",
            "null", "[]", "\"DE89\""};
    private static final String[] DESCRIPTIONS = {"\"rent\"", "\"\"", "\"   \"", "null", "5", "\"a\\u0000b\"",
            "\"" + "x".repeat(141) + "\"", "\" caf\\u00e9 \""};
    private static final String[] SCHEDULES = {"null", SOON, "\"2030-01-31T09:00:00Z\"", "\"tomorrow\"", "5",
            "\"2027-02-30T09:00:00Z\""};
    private static final String[] UNKNOWN = {"\"note\":\"x\"", "\"Amount\":1", "\"x-y\":1", "\"extra\":{\"a\":[1,2]}"};
    private static final String[] TRAILING = {"", " ", "\n", " {}", "x", ",", "]"};

    @Inject
    TransferRequestParser parser;

    @Test
    void aPlainRequestIsReadFromItsTokensAsTheTreeReadsIt() {
        String[] plain = {
                "{\"amount\":12345,\"currency\":\"EUR\",\"destination\":{\"iban\":" + IBAN + ",\"name\":\"Ada Lovelace\"}}",
                "{\"destination\":{\"name\":\"Ada\",\"iban\":\"de89 3704 0044 0532 0130 00\"},\"description\":\"rent\","
                        + "\"currency\":\"GBP\",\"amount\":1}",
                "{\"amount\":100000000,\"currency\":\"EUR\",\"destination\":{\"iban\":" + IBAN
                        + ",\"name\":\" Zo\\u0065\\u0301 \"},\"description\":\"   \",\"executeAt\":" + SOON + "}",
                "{ \"amount\" : 7 , \"currency\" : \"EUR\" , \"destination\" : { \"iban\" : " + IBAN
                        + " , \"name\" : \"A\" } , \"description\" : null , \"executeAt\" : null }\n"};
        for (String body : plain) {
            byte[] bytes = body.getBytes(StandardCharsets.US_ASCII);
            TransferRequest direct = parser.plain(bytes);
            assertNotNull(direct, body);
            assertEquals(parser.parse(body), direct, body);
            assertEquals(direct, parser.parse(bytes, null), body);
        }
        // the name in NFC, the IBAN compact and upper case, a blank description none: as the tree gives them
        TransferRequest composed = parser.plain(plain[2].getBytes(StandardCharsets.US_ASCII));
        assertEquals("Zo\u00e9", composed.destination().name());
        assertNull(composed.description());
        assertEquals("DE89370400440532013000", parser.plain(plain[1].getBytes(StandardCharsets.US_ASCII)).destination().iban());
    }

    @Test
    void everyBodyTheTokensTakeTheTreeTakesTheSame() {
        Random random = new Random(20261207L);
        int taken = 0;
        int refused = 0;
        for (int i = 0; i < 20_000; i++) {
            String body = body(random);
            byte[] bytes = body.getBytes(StandardCharsets.US_ASCII);
            TransferRequest direct = parser.plain(bytes);
            TransferRequest tree;
            try {
                tree = parser.parse(body);
            } catch (ProblemException e) {
                assertNull(direct, () -> "taken by the tokens, refused by the tree (" + e.getMessage() + "): " + body);
                refused++;
                continue;
            }
            if (direct != null) {
                assertEquals(tree, direct, body);
                taken++;
            }
        }
        // the generator reaches both sides often enough for the comparison to mean something
        assertTrue(taken > 500, "plain requests taken: " + taken);
        assertTrue(refused > 5_000, "bodies refused: " + refused);
    }

    /** An object of some of the fields (valid and invalid values, duplicates, unknown ones) in any order, then a tail. */
    private static String body(Random random) {
        List<String> fields = new ArrayList<>();
        field(random, fields, "amount", AMOUNTS, 0.95);
        field(random, fields, "currency", CURRENCIES, 0.95);
        field(random, fields, "destination", DESTINATIONS, 0.95);
        field(random, fields, "description", DESCRIPTIONS, 0.4);
        field(random, fields, "executeAt", SCHEDULES, 0.2);
        if (random.nextDouble() < 0.1) {
            fields.add(UNKNOWN[random.nextInt(UNKNOWN.length)]);
        }
        if (random.nextDouble() < 0.05 && !fields.isEmpty()) {
            fields.add(fields.get(random.nextInt(fields.size())));
        }
        Collections.shuffle(fields, random);
        String tail = random.nextDouble() < 0.9 ? "" : TRAILING[random.nextInt(TRAILING.length)];
        return "{" + String.join(",", fields) + "}" + tail;
    }

    private static void field(Random random, List<String> fields, String name, String[] values, double present) {
        if (random.nextDouble() < present) {
            // mostly the first (valid) values, so that plain requests are common
            String value = random.nextDouble() < 0.7 ? values[random.nextInt(Math.min(2, values.length))] : values[random.nextInt(values.length)];
            fields.add("\"" + name + "\":" + value);
        }
    }
}
