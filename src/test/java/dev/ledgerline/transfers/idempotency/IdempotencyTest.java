package dev.ledgerline.transfers.idempotency;

import dev.ledgerline.transfers.api.ProblemType;
import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Db;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static dev.ledgerline.transfers.support.Api.body;
import static dev.ledgerline.transfers.support.Api.newKey;
import static dev.ledgerline.transfers.support.Api.writer;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The duplicate check of DESIGN §4: one transfer per (principal, Idempotency-Key), whatever the client resends. */
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
        List<Integer> statuses = race(20, writer("carol"), newKey(), body(4242));
        assertTrue(statuses.stream().allMatch(s -> s == 201 || s == 409), "only 201 or 409, got " + statuses);
        assertTrue(statuses.contains(201), "at least the original is created: " + statuses);
    }

    /** Fires {@code n} identical POSTs at once and returns their status codes; asserts one row for the key. */
    static List<Integer> race(int n, String token, String key, String body) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Integer>> answers = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                Callable<Integer> call = () -> {
                    start.await();
                    return Api.post(token, key, body).statusCode();
                };
                answers.add(pool.submit(call));
            }
            start.countDown();
            List<Integer> statuses = new ArrayList<>();
            for (Future<Integer> answer : answers) {
                statuses.add(answer.get(30, TimeUnit.SECONDS));
            }
            List<Map<String, Object>> rows = Db.query("SELECT id FROM transfers WHERE idempotency_key = ?", key);
            assertEquals(1, rows.size(), "exactly one transfer for the key");
            return statuses;
        } finally {
            pool.shutdownNow();
        }
    }
}
