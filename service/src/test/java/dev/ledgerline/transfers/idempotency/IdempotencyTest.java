package dev.ledgerline.transfers.idempotency;

import dev.ledgerline.transfers.problem.ProblemType;
import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Db;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static dev.ledgerline.transfers.support.Api.body;
import static dev.ledgerline.transfers.support.Api.newKey;
import static dev.ledgerline.transfers.support.Api.writer;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The duplicate check (docs/safety.md "Idempotency policy"): one transfer per (principal, Idempotency-Key), whatever the client resends. */
@QuarkusTest
class IdempotencyTest {

    @Test
    void replaysTheOriginalResponseForTheSameKey() {
        String token = writer("alice");
        String key = newKey();
        Response first = Api.post(token, key, body(1250));
        first.then().statusCode(201);
        String id = first.path("id");

        Api.post(token, key, body(1250)).then()
                .statusCode(201)
                .header("Idempotent-Replayed", "true")
                .header("Location", first.header("Location"))
                .body("id", equalTo(id));
        assertEquals(1, Db.count("SELECT count(*) FROM transfers WHERE user_id = 'alice' AND idempotency_key = ?", key));
    }

    @Test
    void fieldOrderAndWhitespaceDoNotMakeADifferentRequest() {
        String token = writer("alice");
        String key = newKey();
        String id = Api.post(token, key, body(990)).then().statusCode(201).extract().path("id");
        String reordered = """
                {
                  "description" : "Rent November",
                  "destination":{"name":"Ada Lovelace",   "iban":"de89 3704 0044 0532 0130 00"},
                  "currency":"EUR",
                  "amount":990
                }
                """;
        Api.post(token, key, reordered).then()
                .statusCode(201)
                .header("Idempotent-Replayed", "true")
                .body("id", equalTo(id));
    }

    @Test
    void aDifferentRequestUnderTheSameKeyIsRejected() {
        String token = writer("alice");
        String key = newKey();
        Api.post(token, key, body(1000)).then().statusCode(201);
        Api.post(token, key, body(1001)).then()
                .statusCode(422)
                .contentType("application/problem+json")
                .body("type", equalTo(ProblemType.IDEMPOTENCY_KEY_REUSED.uri()));
        assertEquals(1, Db.count("SELECT count(*) FROM transfers WHERE user_id = 'alice' AND idempotency_key = ?", key));
        assertEquals(1000L, Db.query("SELECT amount FROM transfers WHERE user_id = 'alice' AND idempotency_key = ?", key)
                .get(0).get("amount"));
    }

    @Test
    void theSameKeyFromTwoPrincipalsMakesTwoTransfers() {
        String key = newKey();
        String forAlice = Api.post(writer("alice"), key, body(300)).then().statusCode(201).extract().path("id");
        String forBob = Api.post(writer("bob"), key, body(300)).then().statusCode(201)
                .header("Idempotent-Replayed", (String) null).extract().path("id");
        assertNotEquals(forAlice, forBob);
        assertEquals(2, Db.count("SELECT count(*) FROM transfers WHERE idempotency_key = ?", key));
    }

    @Test
    void concurrentRequestsWithOneKeyMakeExactlyOneTransfer() throws Exception {
        String key = newKey();
        List<Response> answers = race(20, writer("carol"), key, body(4242));
        List<Integer> statuses = answers.stream().map(Response::statusCode).toList();
        assertTrue(statuses.stream().allMatch(s -> s == 201 || s == 409), "only 201 or 409, got " + statuses);

        // every 201 names the one row the key holds, and only one of them says it created it
        String stored = (String) Db.query("SELECT id::text AS id FROM transfers WHERE idempotency_key = ?", key).get(0).get("id");
        List<Response> created = answers.stream().filter(r -> r.statusCode() == 201).toList();
        assertTrue(!created.isEmpty(), "at least the original is created: " + statuses);
        assertEquals(Set.of(stored), created.stream().map(r -> r.<String>path("id")).collect(Collectors.toSet()),
                "every 201 names the stored transfer");
        assertEquals(1, created.stream().filter(r -> r.header("Idempotent-Replayed") == null).count(),
                "exactly one 201 without Idempotent-Replayed");
    }

    @Test
    void keysAreCaseSensitive() {
        String token = writer("alice");
        String key = "order-" + newKey();
        String lower = Api.post(token, key, body(321)).then().statusCode(201).extract().path("id");
        String upper = Api.post(token, key.toUpperCase(java.util.Locale.ROOT), body(321)).then().statusCode(201)
                .header("Idempotent-Replayed", (String) null).extract().path("id");
        assertNotEquals(lower, upper);
    }

    /** The description as a request may carry it: absent, {@code null}, empty, blank. */
    private static final List<String> NO_DESCRIPTION = java.util.Arrays.asList(null, "null", "\"\"", "\"   \"");

    @Test
    void aBlankAbsentOrNullDescriptionIsTheSameRequest() {
        String token = writer("alice");
        for (String original : NO_DESCRIPTION) {
            String key = newKey();
            Response first = Api.post(token, key, withDescription(original));
            first.then().statusCode(201).header("Idempotent-Replayed", (String) null).body("description", nullValue());
            String id = first.path("id");
            for (String retry : NO_DESCRIPTION) {
                Api.post(token, key, withDescription(retry)).then()
                        .statusCode(201)
                        .header("Idempotent-Replayed", "true")
                        .body("id", equalTo(id));
            }
            assertEquals(1, Db.count("SELECT count(*) FROM transfers WHERE user_id = 'alice' AND idempotency_key = ?"
                    + " AND description IS NULL", key), "one row, stored without a description, for " + original);
        }
        // a description is still part of the request
        String key = newKey();
        Api.post(token, key, withDescription(null)).then().statusCode(201);
        Api.post(token, key, withDescription("\"Rent\"")).then().statusCode(422)
                .body("type", equalTo(ProblemType.IDEMPOTENCY_KEY_REUSED.uri()));
    }

    @Test
    void aNameInDecomposedOrComposedFormIsTheSameRequestAndIsStoredComposed() {
        String token = writer("alice");
        for (List<String> order : List.of(List.of(NFD_NAME, NFC_NAME), List.of(NFC_NAME, NFD_NAME))) {
            String key = newKey();
            Response first = Api.post(token, key, withName(order.get(0)));
            first.then().statusCode(201).body("destination.name", equalTo(NFC_NAME));
            String id = first.path("id");
            for (String retry : order) {
                Api.post(token, key, withName(retry)).then()
                        .statusCode(201)
                        .header("Idempotent-Replayed", "true")
                        .body("id", equalTo(id));
            }
            assertEquals(NFC_NAME, Db.query("SELECT destination_name FROM transfers WHERE id = ?::uuid", id).get(0)
                    .get("destination_name"), "stored, and sent to the provider, in NFC");
        }
    }

    /**
     * Transfers accepted before blank descriptions and composed names counted as the same request carry the fingerprint
     * of the request as it was then sent: the same body still replays, and so does an equal one.
     */
    @Test
    void aTransferStoredUnderTheEarlierFingerprintStillReplays() {
        String token = writer("legacy");
        String emptyDescription = stored("legacy", "Ada Lovelace", "");
        for (String retry : NO_DESCRIPTION) {
            Api.post(token, keyOf(emptyDescription), withDescription(retry)).then()
                    .statusCode(201).header("Idempotent-Replayed", "true").body("id", equalTo(emptyDescription));
        }
        String decomposed = stored("legacy", NFD_NAME, "Rent November");
        for (String retry : List.of(NFD_NAME, NFC_NAME)) {
            Api.post(token, keyOf(decomposed), withName(retry)).then()
                    .statusCode(201).header("Idempotent-Replayed", "true").body("id", equalTo(decomposed));
        }
        Api.post(token, keyOf(decomposed), withName("Ada Lovelace")).then().statusCode(422);
    }

    private static final String NFC_NAME = "Zo\u00eb \u00c5ngstr\u00f6m";
    private static final String NFD_NAME = "Zoe\u0308 A\u030angstro\u0308m";

    private static String withDescription(String json) {
        return """
                {"amount": 1250, "currency": "EUR", "destination": {"iban": "%s", "name": "Ada Lovelace"}%s}"""
                .formatted(Api.IBAN, json == null ? "" : ", \"description\": " + json);
    }

    private static String withName(String name) {
        return """
                {"amount": 1250, "currency": "EUR", "destination": {"iban": "%s", "name": "%s"}, "description": "Rent November"}"""
                .formatted(Api.IBAN, name);
    }

    /**
     * A transfer as the service stored it before the canonical form changed: the name and description as sent, and the
     * fingerprint of that form ({@code FingerprintTest} pins it). Kept out of the pipeline's way; answers its id.
     */
    private static String stored(String principal, String name, String description) {
        String id = java.util.UUID.randomUUID().toString();
        String canonical = "transfer/v1" + field("1250") + field("EUR") + field(Api.IBAN) + field(name) + field(description);
        Db.update("INSERT INTO transfers (id, user_id, idempotency_key, request_fingerprint, amount, currency, destination_iban,"
                        + " destination_name, description, provider_reference, next_attempt_at, last_actor)"
                        + " VALUES (?::uuid, ?, ?, ?, 1250, 'EUR', ?, ?, ?, ?, now() + interval '1 hour', 'test')",
                id, principal, "key-" + id, dev.ledgerline.transfers.hashing.Sha256.hex(canonical), Api.IBAN, name, description,
                "ll_" + id.replace("-", ""));
        // and its key, as the service writes it with every transfer (transfer_keys, V16)
        Db.update("INSERT INTO transfer_keys (user_id, idempotency_key, provider_reference, transfer_id)"
                + " VALUES (?, ?, ?, ?::uuid)", principal, "key-" + id, "ll_" + id.replace("-", ""), id);
        return id;
    }

    private static String keyOf(String id) {
        return "key-" + id;
    }

    private static String field(String value) {
        return "|" + value.length() + ":" + value;
    }

    /** Fires {@code n} identical POSTs at once and returns the answers; asserts one row for the key. */
    static List<Response> race(int n, String token, String key, String body) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Response>> answers = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                Callable<Response> call = () -> {
                    start.await();
                    return Api.post(token, key, body);
                };
                answers.add(pool.submit(call));
            }
            start.countDown();
            List<Response> responses = new ArrayList<>();
            for (Future<Response> answer : answers) {
                responses.add(answer.get(30, TimeUnit.SECONDS));
            }
            List<Map<String, Object>> rows = Db.query("SELECT id FROM transfers WHERE idempotency_key = ?", key);
            assertEquals(1, rows.size(), "exactly one transfer for the key");
            return responses;
        } finally {
            pool.shutdownNow();
        }
    }
}
