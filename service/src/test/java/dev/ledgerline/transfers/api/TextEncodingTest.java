package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.problem.ProblemType;
import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Db;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static dev.ledgerline.transfers.support.Api.as;
import static dev.ledgerline.transfers.support.Api.newKey;
import static dev.ledgerline.transfers.support.Api.writer;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The text of a body as {@link TransferRequestParser} reads it: strict UTF-8 (an invalid byte is a 400, never
 * repaired, and a declared charset other than UTF-8 is a 415), and beneficiary names that refuse what displays as
 * something other than it is (format characters, stacked combining marks). None of these writes a row.
 */
@QuarkusTest
class TextEncodingTest {

    private static final String TRANSFERS_PROBLEM = "application/problem+json";

    @Test
    void invalidUtf8IsA400AndTwoDifferentBodiesNeverBecomeOneTransfer() {
        String token = writer("encoding");
        String key = newKey();
        for (byte bad : new byte[] {(byte) 0xff, (byte) 0xfe}) {
            byte[] body = utf8Body("Ada X");
            body[indexOf(body, (byte) 'X')] = bad;
            as(token).contentType("application/json").header("Idempotency-Key", key).body(body).post("/v1/transfers").then()
                    .statusCode(400).contentType(TRANSFERS_PROBLEM)
                    .body("type", equalTo(ProblemType.BASE + "malformed-request"))
                    .header("Idempotent-Replayed", org.hamcrest.Matchers.nullValue());
        }
        assertEquals(0, Db.count("SELECT count(*) FROM transfers WHERE idempotency_key = ?", key));
    }

    @Test
    void aCharsetOtherThanUtf8IsA415AndUtf8IsAccepted() {
        String token = writer("charset");
        String key = newKey();
        as(token).contentType("application/json; charset=iso-8859-1").header("Idempotency-Key", key)
                .body(Api.body(10).getBytes(StandardCharsets.ISO_8859_1)).post("/v1/transfers").then()
                .statusCode(415).contentType(TRANSFERS_PROBLEM)
                .body("type", equalTo(ProblemType.BASE + "unsupported-media-type"));
        assertEquals(0, Db.count("SELECT count(*) FROM transfers WHERE idempotency_key = ?", key));
        as(token).contentType("application/json; charset=UTF-8").header("Idempotency-Key", newKey())
                .body(utf8Body("Zoë Ångström")).post("/v1/transfers").then()
                .statusCode(201).body("destination.name", equalTo("Zoë Ångström"));
    }

    @Test
    void beneficiaryNamesRefuseFormatCharactersAndStackedMarks() {
        String token = writer("spoof");
        List<String> spoofs = List.of(
                "Ada \u202EecalevoL",       // right-to-left override
                "Ada\u200BLovelace",        // zero-width space
                "Ada\u2066Lovelace\u2069",  // bidi isolate
                "\uFEFFAda Lovelace",       // zero-width no-break space
                "Ada\u00ADLovelace",        // soft hyphen
                "Ada" + "\u0301".repeat(139));
        for (String name : spoofs) {
            String key = newKey();
            as(token).contentType("application/json").header("Idempotency-Key", key).body(utf8Body(name)).post("/v1/transfers").then()
                    .statusCode(400).contentType(TRANSFERS_PROBLEM).body("errors.field", hasItem("destination.name"));
            assertEquals(0, Db.count("SELECT count(*) FROM transfers WHERE idempotency_key = ?", key));
        }
        // decomposed accents are real text: a mark or two per letter is fine
        as(token).contentType("application/json").header("Idempotency-Key", newKey()).body(utf8Body("Nguye\u0302\u0303n Zoe\u0308"))
                .post("/v1/transfers").then().statusCode(201);
    }

    @Test
    void asciiBytesAreReadAsUtf8EvenWhereTheyLookLikeUtf16() {
        // every byte below 0x80, a NUL before each: as UTF-8 a text of NULs (refused), as UTF-16 a valid request. ASCII
        // bodies are read as bytes without a decode first, which must not let the JSON reader guess another encoding.
        String token = writer("ascii");
        for (var encoding : List.of(StandardCharsets.UTF_16BE, StandardCharsets.UTF_16LE)) {
            String key = newKey();
            as(token).contentType("application/json").header("Idempotency-Key", key)
                    .body(Api.body(10).getBytes(encoding)).post("/v1/transfers").then()
                    .statusCode(400).contentType(TRANSFERS_PROBLEM)
                    .body("type", equalTo(ProblemType.BASE + "malformed-request"));
            assertEquals(0, Db.count("SELECT count(*) FROM transfers WHERE idempotency_key = ?", key));
        }
        // a body of ASCII white space is empty, as its text is blank
        as(token).contentType("application/json").header("Idempotency-Key", newKey())
                .body(" \t\r\n\u000B\u001F".getBytes(StandardCharsets.US_ASCII)).post("/v1/transfers").then()
                .statusCode(400).body("type", equalTo(ProblemType.BASE + "malformed-request"))
                .body("detail", equalTo("The request body is empty; send a JSON object."));
        // more than one value, and not an object, read from bytes as from a text
        as(token).contentType("application/json").header("Idempotency-Key", newKey())
                .body((Api.body(10) + " {}").getBytes(StandardCharsets.US_ASCII)).post("/v1/transfers").then()
                .statusCode(400).body("detail", equalTo("The request body must be exactly one JSON object."));
        as(token).contentType("application/json").header("Idempotency-Key", newKey())
                .body("[1]".getBytes(StandardCharsets.US_ASCII)).post("/v1/transfers").then()
                .statusCode(400).body("detail", equalTo("The request body must be a JSON object."));
    }

    private static byte[] utf8Body(String name) {
        return ("{\"amount\": 10, \"currency\": \"EUR\", \"destination\": {\"iban\": \"" + Api.IBAN + "\", \"name\": \""
                + name + "\"}}").getBytes(StandardCharsets.UTF_8);
    }

    private static int indexOf(byte[] bytes, byte b) {
        for (int i = 0; i < bytes.length; i++) {
            if (bytes[i] == b) {
                return i;
            }
        }
        throw new IllegalArgumentException("not found");
    }
}
