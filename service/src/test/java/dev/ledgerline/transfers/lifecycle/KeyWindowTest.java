package dev.ledgerline.transfers.lifecycle;

import dev.ledgerline.transfers.idempotency.IdempotencyKey;
import dev.ledgerline.transfers.idempotency.IdempotencyService;
import dev.ledgerline.transfers.redis.RedisCommands;
import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Await;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.Metrics;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The idempotency key's own lifetime (docs/safety.md "Idempotency policy"): a key lives in {@code transfer_keys},
 * written by the statement that inserts its transfer, and the retention job removes it once it is older than
 * {@code ledgerline.retention.key-window} (30 days) and its transfer ended at least that long ago. Time is moved by
 * backdating the key and its transfer, not by waiting; the Redis entry (kept 24 h, far less than the window) is removed
 * so that PostgreSQL answers, as it would a month later.
 */
@QuarkusTest
class KeyWindowTest {

    private static final Duration DEADLINE = Duration.ofSeconds(60);

    @Inject
    RetentionJob job;

    @Inject
    RedisCommands redis;

    @Test
    void aKeyInsideItsWindowAnswersItsTransferAndAfterItTheSameRequestIsANewTransfer() {
        String owner = "key-window-" + java.util.UUID.randomUUID();
        String token = Api.writer(owner);
        String key = Api.newKey();
        String body = Api.body(211);
        String first = Api.post(token, key, body).then().statusCode(201).extract().path("id");
        Await.status(first, "sent", DEADLINE);
        String firstReference = reference(first);

        // 29 days after it ended: inside the window, the job keeps the key and a replay answers the transfer
        first = backdate(first, Duration.ofDays(29));
        runJob();
        assertEquals(1, keys(owner, key), "inside its window the key stays");
        forgetInRedis(owner, key);
        Api.post(token, key, body).then().statusCode(201).header("Idempotent-Replayed", "true").body("id", equalTo(first));
        Api.post(token, key, Api.body(212)).then().statusCode(422);

        // 31 days after it ended: past the window, the job removes the key; the transfer itself stays
        first = backdate(first, Duration.ofDays(31));
        double expired = Metrics.sum("ledgerline_retention_keys_expired_total", "");
        RetentionJob.Run run = runJob();
        assertTrue(run.keysExpired() >= 1, "the key past its window was removed: " + run);
        assertEquals(0, keys(owner, key));
        assertTrue(Metrics.sum("ledgerline_retention_keys_expired_total", "") >= expired + 1);
        Api.get(token, first).then().statusCode(200).body("status", equalTo("sent"));

        // the published policy: the same request after the window is a new intent, a new transfer; under the intent's
        // reference, which the provider (whose key window start-up holds below ours) has forgotten by then
        forgetInRedis(owner, key);
        Response again = Api.post(token, key, body);
        again.then().statusCode(201);
        assertEquals(null, again.header("Idempotent-Replayed"), "a new transfer, not a replay");
        String second = again.path("id");
        assertNotEquals(first, second);
        assertEquals(firstReference, reference(second), "a reference derived from the intent alone: a lost commit that"
                + " Redis forgot too re-creates a row under it, and the provider pays that intent once");
        Await.status(second, "sent", DEADLINE);
        assertEquals(2, Db.count("SELECT count(*) FROM transfers WHERE user_id = ? AND idempotency_key = ?", owner, key));
        assertEquals(1, keys(owner, key), "the key is taken again, by the new transfer, for a new window");
        Api.post(token, key, body).then().statusCode(201).header("Idempotent-Replayed", "true").body("id", equalTo(second));
    }

    @Test
    void aTransferThatHasNotEndedKeepsItsKeyHoweverOld() {
        String owner = "key-open-" + java.util.UUID.randomUUID();
        String token = Api.writer(owner);
        String key = Api.newKey();
        String executeAt = "\"" + Instant.now().plus(Duration.ofDays(5)).truncatedTo(ChronoUnit.MILLIS) + "\"";
        String body = """
                {"amount": 213, "currency": "EUR", "destination": {"iban": "%s", "name": "Ada Lovelace"},
                 "description": "Rent", "executeAt": %s}""".formatted(Api.IBAN, executeAt);
        String id = Api.post(token, key, body).then().statusCode(201).extract().path("id");
        assertEquals("pending", Await.dbStatus(id));
        id = backdate(id, Duration.ofDays(400));

        runJob();

        assertEquals(1, keys(owner, key), "a pending transfer keeps its key past the window");
        forgetInRedis(owner, key);
        Api.post(token, key, body).then().statusCode(201).header("Idempotent-Replayed", "true").body("id", equalTo(id));
    }

    @Test
    void exactlyOneTransferPerKeyWhenDuplicatesRace() throws Exception {
        String owner = "key-race-" + java.util.UUID.randomUUID();
        String token = Api.writer(owner);
        String key = Api.newKey();
        String body = Api.body(214);
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<Response>> answers = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                answers.add(pool.submit(() -> Api.post(token, key, body)));
            }
            Set<String> ids = new HashSet<>();
            for (Future<Response> answer : answers) {
                Response r = answer.get();
                assertTrue(r.statusCode() == 201 || r.statusCode() == 409, "201 or 409 (in flight): " + r.statusCode());
                if (r.statusCode() == 201) {
                    ids.add(r.path("id"));
                }
            }
            assertEquals(1, ids.size(), "every 201 names the same transfer: " + ids);
        } finally {
            pool.shutdownNow();
        }
        assertEquals(1, Db.count("SELECT count(*) FROM transfers WHERE user_id = ? AND idempotency_key = ?", owner, key));
        assertEquals(1, keys(owner, key));
    }

    private RetentionJob.Run runJob() {
        return await().atMost(DEADLINE).until(() -> job.run().await().atMost(DEADLINE), r -> !r.busy());
    }

    /**
     * The key and its transfer as if created, and ended, {@code ago}: behind the triggers, which refuse both changes.
     * The transfer's id, which carries its creation time, changes with it: returns the new one.
     */
    private static String backdate(String id, Duration ago) {
        String at = "now() - interval '" + ago.toSeconds() + " seconds'";
        return Db.createdBack(id, at, at, "UPDATE transfer_keys SET created_at = " + at + " WHERE transfer_id = '%s'");
    }

    private void forgetInRedis(String owner, String key) {
        redis.execute("UNLINK", IdempotencyService.redisKey(owner, IdempotencyKey.parse(key))).await().atMost(DEADLINE);
    }

    private static long keys(String owner, String key) {
        return Db.count("SELECT count(*) FROM transfer_keys WHERE user_id = ? AND idempotency_key = ?", owner, key);
    }

    private static String reference(String id) {
        return (String) Db.query("SELECT provider_reference FROM transfers WHERE id = ?::uuid", id).get(0).get("provider_reference");
    }
}
