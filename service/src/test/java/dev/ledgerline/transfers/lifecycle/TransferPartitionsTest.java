package dev.ledgerline.transfers.lifecycle;

import dev.ledgerline.transfers.idempotency.IdempotencyKey;
import dev.ledgerline.transfers.idempotency.IdempotencyService;
import dev.ledgerline.transfers.redis.RedisCommands;
import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Await;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.Metrics;
import dev.ledgerline.transfers.support.Rows;
import dev.ledgerline.transfers.transfer.EventPartition;
import dev.ledgerline.transfers.transfer.TransferRepository;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Ended transfers leave the primary a day's partition at a time (migration V17), in the shared test profile with the
 * configured policy ({@code transfers-retention} and {@code key-window}, 30 days each). Old days are made by moving
 * transfers and their keys back in time behind the triggers, not by waiting. A day leaves whole once every transfer of it
 * has ended and every key of it has passed its window; a parked or an open transfer keeps its day, and so does a key
 * still inside its window (a transfer that ended only recently).
 */
@QuarkusTest
class TransferPartitionsTest {

    private static final Duration DEADLINE = Duration.ofSeconds(60);
    private static final Duration DAY = Duration.ofDays(1);
    private static final DateTimeFormatter PARTITION = DateTimeFormatter.ofPattern("'transfers_'yyyyMMdd't'HHmmss")
            .withZone(ZoneOffset.UTC);

    @Inject
    RetentionJob job;

    @Inject
    TransferRepository transfers;

    @Inject
    RedisCommands redis;

    @Test
    void endedTransfersPastRetentionLeaveAPartitionAtATimeWhileOpenParkedAndKeyedDaysStay() {
        await().atMost(DEADLINE).until(() -> Metrics.sum("ledgerline_retention_runs_total", "") >= 1);
        Instant day0 = Instant.parse("2020-01-01T00:00:00Z").plus(DAY.multipliedBy(ThreadLocalRandom.current().nextInt(300)));
        int made = await().atMost(DEADLINE).until(() -> transfers.createTransferPartitions(day0, day0.plus(DAY.multipliedBy(4)),
                DAY, 10, Duration.ofSeconds(1)).await().atMost(DEADLINE), n -> n >= 0);
        assertEquals(4, made, "one partition per day, none of them there before");

        String owner = "partitions-" + UUID.randomUUID();
        String token = Api.writer(owner);
        // day 0: two transfers sent and done with long ago; day 1: one sent, one parked; day 2: one not sent yet;
        // day 3: one created then and ended only now, whose key is inside its window
        String keyA = Api.newKey();
        String bodyA = Api.body(301);
        String a = Api.post(token, keyA, bodyA).then().statusCode(201).extract().path("id");
        String b = Api.create(token, 302);
        String c = Api.create(token, 303);
        String keyD = Api.newKey();
        String bodyD = Api.body(304);
        String d = Api.post(token, keyD, bodyD).then().statusCode(201).extract().path("id");
        Await.allTerminal(List.of(a, b, c, d), DEADLINE);
        a = backdate(a, day0.plus(Duration.ofHours(1)), true);
        b = backdate(b, day0.plus(Duration.ofHours(2)), true);
        c = backdate(c, day0.plus(DAY).plus(Duration.ofHours(1)), true);
        d = backdate(d, day0.plus(DAY.multipliedBy(3)).plus(Duration.ofHours(1)), false);
        String parked = Rows.parkedAt(owner, "reconciling", day0.plus(DAY).plus(Duration.ofHours(3)).atOffset(ZoneOffset.UTC));
        Db.update("UPDATE transfers SET next_attempt_at = 'infinity' WHERE id = ?::uuid", parked);
        Instant openAt = day0.plus(DAY.multipliedBy(2)).plus(Duration.ofHours(1));
        String open = UUID.randomUUID().toString();
        Db.update("INSERT INTO transfers (id, user_id, idempotency_key, request_fingerprint, amount, currency, destination_iban,"
                + " destination_name, provider_reference, status, execute_at, next_attempt_at, last_actor, created_at, updated_at)"
                + " VALUES (?::uuid, ?, ?, 'fp', 10, 'EUR', 'DE89370400440532013000', 'Ada', ?, 'pending', '2099-01-01Z',"
                + " '2099-01-01Z', 'test', ?::timestamptz, ?::timestamptz)",
                open, owner, "open-" + open, "ll_" + open.replace("-", ""), openAt.toString(), openAt.toString());
        String today = Api.create(token, 305);
        Await.status(today, "sent", DEADLINE);
        assertEquals(PARTITION.format(day0), partitionOf(a), "a is in day 0's partition");
        assertEquals(PARTITION.format(day0.plus(DAY.multipliedBy(3))), partitionOf(d));

        RetentionJob.Run run = await().atMost(DEADLINE).until(() -> job.run().await().atMost(DEADLINE), r -> !r.busy());

        Map<String, EventPartition.Outcome> outcomes = run.transferPartitionsDetached().stream()
                .collect(Collectors.toMap(EventPartition::name, EventPartition::outcome));
        assertEquals(EventPartition.Outcome.DROPPED, outcomes.get(PARTITION.format(day0)), "ended transfers: " + outcomes);
        assertEquals(EventPartition.Outcome.HELD, outcomes.get(PARTITION.format(day0.plus(DAY))), "a parked one's: " + outcomes);
        assertEquals(EventPartition.Outcome.HELD, outcomes.get(PARTITION.format(day0.plus(DAY.multipliedBy(2)))),
                "an open one's: " + outcomes);
        assertEquals(EventPartition.Outcome.HELD, outcomes.get(PARTITION.format(day0.plus(DAY.multipliedBy(3)))),
                "a key inside its window: " + outcomes);
        assertEquals(0, Db.count("SELECT count(*) FROM pg_class WHERE relname = ?", PARTITION.format(day0)),
                "detached and dropped (keep-detached=false)");

        // a and b left the primary with their day, whole rows, no DELETE; their keys had passed their window before
        assertEquals(0, Db.count("SELECT count(*) FROM transfers WHERE id IN (?::uuid, ?::uuid)", a, b));
        assertEquals(0, Db.count("SELECT count(*) FROM transfer_keys WHERE transfer_id IN (?::uuid, ?::uuid)", a, b));
        Api.get(token, a).then().statusCode(404);
        // the rest is where it was, open and parked transfers going on as before
        assertEquals("sent", Await.dbStatus(c));
        assertEquals("sent", Await.dbStatus(d));
        assertEquals("reconciling", Await.dbStatus(parked));
        assertEquals("pending", Await.dbStatus(open));
        assertEquals("sent", Await.dbStatus(today));

        // inside its window a key answers its transfer, whatever partition holds it
        forgetInRedis(owner, keyD);
        Api.post(token, keyD, bodyD).then().statusCode(201).header("Idempotent-Replayed", "true").body("id", equalTo(d));
        // after it, the published policy: the same request is a new transfer
        forgetInRedis(owner, keyA);
        Response again = Api.post(token, keyA, bodyA);
        again.then().statusCode(201);
        assertNull(again.header("Idempotent-Replayed"));
        assertNotEquals(a, again.path("id"));

        // partitions of transfers reach a week ahead, and the gauges say what is left behind
        job.report().await().atMost(DEADLINE);
        String metrics = Metrics.scrape();
        assertTrue(Metrics.sum(metrics, "ledgerline_retention_transfers_covered_ahead_seconds", "") > Duration.ofDays(6).toSeconds());
        assertTrue(Metrics.sum(metrics, "ledgerline_retention_transfers_overdue", "") >= 3, "the three held partitions");
        assertTrue(Metrics.sum(metrics, "ledgerline_retention_transfer_partitions_total", "action=\"dropped\"") >= 1);
    }

    /**
     * Two inserts of one key whose transactions fall on either side of a day's boundary, so that their transfers would
     * land in different partitions: the key table serialises them, and exactly one transfer exists. The statement is the
     * service's shape (TransferSql.INSERT) with the creation time written out instead of now().
     */
    @Test
    void aDuplicateKeyRacingAcrossAPartitionBoundaryStillYieldsExactlyOneTransfer() throws Exception {
        Instant midnight = Instant.parse("2020-12-01T00:00:00Z").plus(DAY.multipliedBy(ThreadLocalRandom.current().nextInt(20)));
        await().atMost(DEADLINE).until(() -> transfers.createTransferPartitions(midnight.minus(DAY), midnight.plus(DAY),
                DAY, 10, Duration.ofSeconds(1)).await().atMost(DEADLINE), n -> n >= 0);
        String owner = "race-" + UUID.randomUUID();
        String key = "race-key";
        try (Connection first = Db.connect()) {
            first.setAutoCommit(false);
            String firstId = UUID.randomUUID().toString();
            assertEquals(1, insert(first, owner, key, firstId, midnight.minusMillis(1)));
            // the second arrives while the first has not committed, one millisecond past midnight: another partition
            String secondId = UUID.randomUUID().toString();
            CompletableFuture<Integer> second = CompletableFuture.supplyAsync(() -> {
                try (Connection c = Db.connect()) {
                    return insert(c, owner, key, secondId, midnight.plusMillis(1));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            await().atMost(DEADLINE).until(() -> Db.count("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                    + " AND query LIKE '%INSERT INTO transfer_keys%'") >= 1);
            assertFalse(second.isDone(), "the second waits for the first's key");
            first.commit();
            assertEquals(0, second.get(DEADLINE.toSeconds(), TimeUnit.SECONDS), "the second inserted nothing: the key was taken");
            assertEquals(List.of(firstId), Db.query("SELECT id::text AS id FROM transfers WHERE user_id = ?", owner).stream()
                    .map(r -> (String) r.get("id")).toList());
            assertEquals(PARTITION.format(midnight.minus(DAY)), partitionOf(firstId));
        }
    }

    private static int insert(Connection c, String owner, String key, String id, Instant at) throws Exception {
        try (var st = c.prepareStatement("""
                WITH k AS (
                    INSERT INTO transfer_keys (user_id, idempotency_key, provider_reference, transfer_id, created_at)
                    VALUES (?, ?, ?, ?::uuid, ?::timestamptz)
                    ON CONFLICT DO NOTHING
                    RETURNING transfer_id, user_id, idempotency_key, provider_reference, created_at)
                INSERT INTO transfers (id, user_id, idempotency_key, request_fingerprint, amount, currency, destination_iban,
                                       destination_name, provider_reference, status, next_attempt_at, last_actor, created_at,
                                       updated_at, execute_at)
                SELECT transfer_id, user_id, idempotency_key, 'fp', 10, 'EUR', 'DE89370400440532013000', 'Ada',
                       provider_reference, 'pending', '2099-01-01Z', 'race', created_at, created_at, '2099-01-01Z'
                  FROM k
                ON CONFLICT DO NOTHING""")) {
            st.setString(1, owner);
            st.setString(2, key);
            st.setString(3, "ll_" + id.replace("-", ""));
            st.setString(4, id);
            st.setString(5, at.toString());
            return st.executeUpdate();
        }
    }

    /**
     * The transfer and its key as if created at {@code at}; ended then too, or ({@code endedThen} false) only now. The
     * transfer's id, which carries its creation time, changes with it: returns the new one.
     */
    private static String backdate(String id, Instant at, boolean endedThen) {
        return Db.createdBack(id, "'" + at + "'::timestamptz", endedThen ? "'" + at + "'::timestamptz" : "updated_at",
                "UPDATE transfer_keys SET created_at = '" + at + "' WHERE transfer_id = '%s'");
    }

    private void forgetInRedis(String owner, String key) {
        redis.execute("UNLINK", IdempotencyService.redisKey(owner, IdempotencyKey.parse(key))).await().atMost(DEADLINE);
    }

    private static String partitionOf(String id) {
        return (String) Db.query("SELECT tableoid::regclass::text AS p FROM transfers WHERE id = ?::uuid", id).get(0).get("p");
    }
}
