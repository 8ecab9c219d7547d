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
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The duplicate check (README "Idempotency policy"): one transfer per (principal, Idempotency-Key), whatever the client resends. */
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
