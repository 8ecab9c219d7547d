package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.problem.ProblemType;
import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Db;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.stream.Stream;

import static dev.ledgerline.transfers.support.Api.as;
import static dev.ledgerline.transfers.support.Api.body;
import static dev.ledgerline.transfers.support.Api.newKey;
import static dev.ledgerline.transfers.support.Api.writer;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.hasSize;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** Every class of malformed input gets a 4xx problem document that names the problem, and writes nothing. */
@QuarkusTest
class ValidationTest {

    private static final String DEST = "\"destination\": {\"iban\": \"DE89370400440532013000\", \"name\": \"Ada\"}";

    static Stream<Arguments> invalidBodies() {
        return Stream.of(
                Arguments.of("{\"amount\": 10, \"currency\": \"EUR\", " + DEST, "malformed-request", null),
                Arguments.of("[1, 2, 3]", "malformed-request", null),
                Arguments.of("{\"amount\": 1}{\"amount\": 2}", "malformed-request", null),
                Arguments.of("{\"amount\": 1, \"amount\": 2, \"currency\": \"EUR\", " + DEST + "}", "malformed-request", null),
                Arguments.of("{\"amount\": \"10\", \"currency\": \"EUR\", " + DEST + "}", "validation-failed", "amount"),
                Arguments.of("{\"amount\": 10.5, \"currency\": \"EUR\", " + DEST + "}", "validation-failed", "amount"),
                Arguments.of("{\"amount\": 0, \"currency\": \"EUR\", " + DEST + "}", "validation-failed", "amount"),
                Arguments.of("{\"amount\": -5, \"currency\": \"EUR\", " + DEST + "}", "validation-failed", "amount"),
                Arguments.of("{\"amount\": 100000001, \"currency\": \"EUR\", " + DEST + "}", "validation-failed", "amount"),
                Arguments.of("{\"amount\": 99999999999999999999999, \"currency\": \"EUR\", " + DEST + "}", "validation-failed", "amount"),
                Arguments.of("{\"currency\": \"EUR\", " + DEST + "}", "validation-failed", "amount"),
                Arguments.of("{\"amount\": 10, \"currency\": \"XXX\", " + DEST + "}", "validation-failed", "currency"),
                Arguments.of("{\"amount\": 10, \"currency\": 978, " + DEST + "}", "validation-failed", "currency"),
                Arguments.of("{\"amount\": 10, \"currency\": \"EUR\", \"destination\": {\"iban\": \"DE89370400440532013001\", \"name\": \"Ada\"}}",
                        "validation-failed", "destination.iban"),
                Arguments.of("{\"amount\": 10, \"currency\": \"EUR\", \"destination\": {\"iban\": \"DE89\", \"name\": \"Ada\"}}",
                        "validation-failed", "destination.iban"),
                Arguments.of("{\"amount\": 10, \"currency\": \"EUR\", \"destination\": {\"iban\": \"DE89370400440532013000\", \"name\": \" \"}}",
                        "validation-failed", "destination.name"),
                Arguments.of("{\"amount\": 10, \"currency\": \"EUR\", \"destination\": {\"iban\": \"DE89370400440532013000\", \"name\": \"A\\u0000b\"}}",
                        "validation-failed", "destination.name"),
                Arguments.of("{\"amount\": 10, \"currency\": \"EUR\", " + DEST + ", \"description\": \"" + "x".repeat(141) + "\"}",
                        "validation-failed", "description"),
                // unknown names no /v1 field could have, and known names in another case: refused (lowerCamelCase ones are ignored)
                Arguments.of("{\"amount\": 10, \"currency\": \"EUR\", " + DEST + ", \"memo_text\": \"hi\"}", "validation-failed", "memo_text"),
                Arguments.of("{\"amount\": 10, \"currency\": \"EUR\", " + DEST + ", \"Memo\": \"hi\"}", "validation-failed", "Memo"),
                Arguments.of("{\"amount\": 10, \"currency\": \"EUR\", " + DEST + ", \"executeat\": \"2030-01-31T09:00:00Z\"}",
                        "validation-failed", "executeat"),
                Arguments.of("{\"amount\": 10, \"currency\": \"EUR\", \"destination\": {\"iban\": \"DE89370400440532013000\", \"name\": \"Ada\", \"bic code\": \"X\"}}",
                        "validation-failed", "destination.bic code"),
                Arguments.of("{\"amount\": 10, \"currency\": \"EUR\", \"destination\": {\"iban\": \"DE89370400440532013000\", \"name\": \"Ada\", \"Name\": \"Eve\"}}",
                        "validation-failed", "destination.Name"),
                Arguments.of("{\"amount\": 10, \"currency\": \"EUR\", \"destination\": \"DE89370400440532013000\"}", "validation-failed", "destination"),
                Arguments.of("{\"a\":" + "[".repeat(50) + "]".repeat(50) + "}", "malformed-request", null));
    }

    @ParameterizedTest
    @MethodSource("invalidBodies")
    void rejectsAMalformedBodyWithAProblemNamingIt(String body, String type, String field) {
        String key = newKey();
        var then = Api.post(writer("val"), key, body).then()
                .statusCode(400)
                .contentType("application/problem+json")
                .body("type", equalTo(ProblemType.BASE + type))
                .body("status", equalTo(400))
                .body("detail", org.hamcrest.Matchers.notNullValue())
                .body(not500Trace());
        if (field != null) {
            then.body("errors.field", hasItem(field));
        }
        assertEquals(0, Db.count("SELECT count(*) FROM transfers WHERE idempotency_key = ?", key));
    }

    @Test
    void listsEveryViolatedFieldAtOnce() {
        Api.post(writer("val"), newKey(), "{\"amount\": 0, \"currency\": \"ZZZ\", \"destination\": {\"iban\": \"XX00\", \"name\": \"\"}, \"x-1\": 1}")
                .then()
                .statusCode(400)
                .body("errors", hasSize(5))
                .body("errors.field", hasItem("amount"))
                .body("errors.field", hasItem("currency"))
                .body("errors.field", hasItem("destination.iban"))
                .body("errors.field", hasItem("destination.name"))
                .body("errors.field", hasItem("x-1"));
    }

    /**
     * An optional field a later /v1 may add reaches an instance that does not know it (a rolling update): ignored, not
     * refused. It is not part of the request: not in the answer, not stored, and the same request without it is a
     * replay of the same transfer.
     */
    @Test
    void anUnknownLowerCamelCaseFieldIsIgnored() {
        String key = newKey();
        String withNewFields = "{\"amount\": 1250, \"currency\": \"EUR\", \"destination\": {\"iban\": \"DE89370400440532013000\","
                + " \"name\": \"Ada Lovelace\", \"bic\": \"COBADEFFXXX\"}, \"description\": \"Rent November\","
                + " \"purposeCode\": \"RENT\", \"remittance\": {\"reference\": [1, 2]}}";

        String id = Api.post(writer("val-new-fields"), key, withNewFields).then()
                .statusCode(201)
                .body("$", org.hamcrest.Matchers.not(org.hamcrest.Matchers.hasKey("purposeCode")))
                .body("destination", org.hamcrest.Matchers.not(org.hamcrest.Matchers.hasKey("bic")))
                .extract().path("id");

        Api.post(writer("val-new-fields"), key, body(1250)).then()
                .statusCode(201)
                .header("Idempotent-Replayed", "true")
                .body("id", equalTo(id));
    }

    static Stream<Arguments> invalidKeys() {
        return Stream.of(
                Arguments.of("k".repeat(256), "idempotency-key-invalid"),
                Arguments.of("abc\u0001def", "idempotency-key-invalid"),
                Arguments.of("two words", "idempotency-key-invalid"),
                Arguments.of("\"unterminated", "idempotency-key-invalid"),
                Arguments.of("\"\"", "idempotency-key-invalid"));
    }

    @ParameterizedTest
    @MethodSource("invalidKeys")
    void rejectsAMalformedIdempotencyKey(String key, String type) {
        as(writer("val")).contentType(ContentType.JSON).header("Idempotency-Key", key).body(body(10))
                .post("/v1/transfers").then()
                .statusCode(400)
                .contentType("application/problem+json")
                .body("type", equalTo(ProblemType.BASE + type));
    }

    @Test
    void requiresAnIdempotencyKey() {
        as(writer("val")).contentType(ContentType.JSON).body(body(10)).post("/v1/transfers").then()
                .statusCode(400)
                .body("type", equalTo(ProblemType.IDEMPOTENCY_KEY_MISSING.uri()));
    }

    @Test
    void aDuplicatedIdempotencyKeyIsA400() {
        String key = newKey();
        as(writer("two-keys")).contentType("application/json").header("Idempotency-Key", key).header("Idempotency-Key", newKey())
                .body(Api.body(10)).post("/v1/transfers").then()
                .statusCode(400).contentType("application/problem+json")
                .body("type", equalTo(ProblemType.BASE + "idempotency-key-invalid"));
        assertEquals(0, Db.count("SELECT count(*) FROM transfers WHERE idempotency_key = ?", key));
    }

    @Test
    void acceptsAQuotedStructuredFieldKey() {
        String key = "\"order 42 \\\"retry\\\"\"";
        as(writer("val")).contentType(ContentType.JSON).header("Idempotency-Key", key).body(body(10))
                .post("/v1/transfers").then().statusCode(201);
        assertEquals(1, Db.count("SELECT count(*) FROM transfers WHERE idempotency_key = ?", "order 42 \"retry\""));
    }

    @Test
    void rejectsAnOversizedBody() {
        String huge = body(10, "EUR", "x".repeat(20_000));
        Api.post(writer("val"), newKey(), huge).then()
                .statusCode(413)
                .contentType("application/problem+json")
                .body("type", equalTo(ProblemType.PAYLOAD_TOO_LARGE.uri()));
    }

    @Test
    void rejectsAnIbanThatOnlyLooksValidAfterUnicodeCaseFolding() {
        Api.post(writer("val"), newKey(), "{\"amount\": 10, \"currency\": \"EUR\", \"destination\": "
                        + "{\"iban\": \"GB82 weſt 1234 5698 7654 32\", \"name\": \"Ada\"}}").then()
                .statusCode(400)
                .body("errors.field", hasItem("destination.iban"));
    }

    @Test
    void aNonCanonicalIdIsNotFound() {
        Api.get(writer("val"), "1-1-1-1-1").then().statusCode(404);
    }

    @Test
    void rejectsANonJsonBody() {
        as(writer("val")).contentType("text/plain").header("Idempotency-Key", newKey()).body("amount=10")
                .post("/v1/transfers").then()
                .statusCode(415)
                .contentType("application/problem+json");
    }

    private static org.hamcrest.Matcher<Object> not500Trace() {
        return org.hamcrest.Matchers.not(org.hamcrest.Matchers.hasToString(containsString("at dev.ledgerline")));
    }
}
