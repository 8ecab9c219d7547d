package dev.ledgerline.transfers.lifecycle;

import dev.ledgerline.transfers.events.FeedCursor;
import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Await;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.Metrics;
import dev.ledgerline.transfers.support.Rows;
import dev.ledgerline.transfers.transfer.EventPartition;
import dev.ledgerline.transfers.transfer.TransferRepository;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Collectors;

import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The retention job over partitions of old and new history, in the shared test profile: the old days are made by
 * moving transfers' times back (their rows and events, as if they had been written then), not by waiting, and the
 * job runs with the configured policy ({@code ledgerline.events.retention}, 30 days). A partition whose history is
 * all of ended transfers leaves the primary whole; one that holds an event of a parked or an open transfer stays;
 * the transfers themselves, and so their keys, stay.
 */
@QuarkusTest
class RetentionJobTest {

    private static final Duration DEADLINE = Duration.ofSeconds(60);
    private static final Duration DAY = Duration.ofDays(1);
    private static final DateTimeFormatter PARTITION = DateTimeFormatter.ofPattern("'transfer_events_'yyyyMMdd't'HHmmss")
            .withZone(ZoneOffset.UTC);

    @Inject
    RetentionJob job;

    @Inject
    TransferRepository transfers;

    @Test
    void historyPastRetentionLeavesThePrimaryAPartitionAtATimeWhileOpenAndParkedTransfersKeepTheirs() {
        // the run at start-up has happened: the next scheduled one is ledgerline.retention.every (10 min) away
        await().atMost(DEADLINE).until(() -> Metrics.sum("ledgerline_retention_runs_total", "") >= 1);

        // three days of partitions a year or more ago, made the way the job makes them ahead
        Instant day0 = Instant.parse("2022-01-01T00:00:00Z").plus(DAY.multipliedBy(ThreadLocalRandom.current().nextInt(300)));
        int made = await().atMost(DEADLINE).until(() -> transfers.createEventPartitions(day0, day0.plus(DAY.multipliedBy(3)),
                DAY, 10, Duration.ofSeconds(1)).await().atMost(DEADLINE), n -> n >= 0);
        assertEquals(3, made, "one partition per day, none of them there before");

        String owner = "retention-" + UUID.randomUUID();
        String token = Api.writer(owner);
        // day 0: two transfers sent and done with; day 1: one sent, one parked; day 2: one not sent yet
        String keyA = Api.newKey();
        String bodyA = Api.body(101);
        String a = Api.post(token, keyA, bodyA).then().statusCode(201).extract().path("id");
        String b = Api.create(token, 102);
        String c = Api.create(token, 103);
        Await.allTerminal(List.of(a, b, c), DEADLINE);
        assertEquals("sent", Await.dbStatus(a));
        a = backdate(a, day0.plus(Duration.ofHours(1)));
        b = backdate(b, day0.plus(Duration.ofHours(2)));
        c = backdate(c, day0.plus(DAY).plus(Duration.ofHours(1)));
        Instant parkedAt = day0.plus(DAY).plus(Duration.ofHours(3));
        String parked = Rows.parkedAt(owner, "reconciling", parkedAt.atOffset(ZoneOffset.UTC));
        Db.update("UPDATE transfers SET next_attempt_at = 'infinity' WHERE id = ?::uuid", parked);
        event(parked, "reconciling", parkedAt);
        // scheduled years ahead, so that no worker sends it and no stuck-transfer gauge counts it
        Instant openAt = day0.plus(DAY.multipliedBy(2)).plus(Duration.ofHours(1));
        String open = UUID.randomUUID().toString();
        Db.update("INSERT INTO transfers (id, user_id, idempotency_key, request_fingerprint, amount, currency, destination_iban,"
                + " destination_name, provider_reference, status, execute_at, next_attempt_at, last_actor, created_at, updated_at)"
                + " VALUES (?::uuid, ?, ?, 'fp', 10, 'EUR', 'DE89370400440532013000', 'Ada', ?, 'pending', '2099-01-01Z',"
                + " '2099-01-01Z', 'test', ?::timestamptz, ?::timestamptz)",
                open, owner, "open-" + open, "ll_" + open.replace("-", ""), openAt.toString(), openAt.toString());
        event(open, "pending", openAt);
        // and one of today
        String today = Api.create(token, 104);
        Await.status(today, "sent", DEADLINE);
        assertEquals(Set.of(PARTITION.format(day0)), partitionsOf(a, b), "a and b's history is in day 0's partition");

        RetentionJob.Run run = await().atMost(DEADLINE).until(() -> job.run().await().atMost(DEADLINE), r -> !r.busy());

        Map<String, EventPartition.Outcome> outcomes = run.detached().stream()
                .collect(Collectors.toMap(EventPartition::name, EventPartition::outcome));
        assertEquals(EventPartition.Outcome.DROPPED, outcomes.get(PARTITION.format(day0)), "ended history: " + outcomes);
        assertEquals(EventPartition.Outcome.HELD, outcomes.get(PARTITION.format(day0.plus(DAY))), "a parked transfer's: " + outcomes);
        assertEquals(EventPartition.Outcome.HELD, outcomes.get(PARTITION.format(day0.plus(DAY.multipliedBy(2)))),
                "an open transfer's: " + outcomes);
        Set<String> attached = Db.query("SELECT name FROM ledgerline_event_partitions()").stream()
                .map(r -> (String) r.get("name")).collect(Collectors.toSet());
        assertFalse(attached.contains(PARTITION.format(day0)), "detached and dropped: " + attached);
        assertEquals(0, Db.count("SELECT count(*) FROM pg_class WHERE relname = ?", PARTITION.format(day0)),
                "dropped, not kept (ledgerline.retention.keep-detached=false)");

        // the history left the primary, whole partitions of it; the rest is where it was
        assertEquals(0, events(a) + events(b), "a and b's events left with their partition");
        assertEquals(3, events(c), "c's events stay: its day also holds a parked transfer's");
        assertEquals(1, events(parked));
        assertEquals(1, events(open));
        assertEquals(3, events(today));
        // transfers stay on the primary, ended or not, and the open ones go on as before
        Api.get(token, a).then().statusCode(200).body("status", equalTo("sent"));
        assertEquals("reconciling", Await.dbStatus(parked));
        assertEquals("pending", Await.dbStatus(open));

        // the key of a transfer whose history was detached still answers that transfer
        Api.post(token, keyA, bodyA).then().statusCode(201).header("Idempotent-Replayed", "true").body("id", equalTo(a));
        assertEquals(1, Db.count("SELECT count(*) FROM transfers WHERE user_id = ? AND idempotency_key = ?", owner, keyA));

        // the feed refuses a cursor from that far back, as it did before the partition left
        String cursor = new FeedCursor(1, UUID.fromString(a), 2, day0.plus(Duration.ofHours(1))).encode();
        Api.as(Api.token("retention-feed", List.of("transfers.read.all"))).queryParam("after", cursor)
                .get("/v1/events").then().statusCode(410);

        // partitions exist a week ahead, and the gauges say what is left behind
        Instant coveredUntil = job.report().await().atMost(DEADLINE).coveredUntil();
        assertTrue(coveredUntil.isAfter(Instant.now().plus(Duration.ofDays(6))), "covered until " + coveredUntil);
        String metrics = Metrics.scrape();
        assertTrue(Metrics.sum(metrics, "ledgerline_retention_events_covered_ahead_seconds", "") > Duration.ofDays(6).toSeconds());
        assertTrue(Metrics.sum(metrics, "ledgerline_retention_events_overdue", "") >= 2, "the two held partitions are overdue");
        assertTrue(Metrics.sum(metrics, "ledgerline_retention_partitions_total", "action=\"dropped\"") >= 1);
        assertEquals(0, Metrics.sum(metrics, "ledgerline_retention_events_default_rows", ""), "every event had a partition");
    }

    @Test
    void aDetachRunsOnOneInstanceAtATimeAndTheOthersAreToldItIsBusy() throws Exception {
        try (var c = Db.connect()) {
            c.setAutoCommit(false);
            Db.query(c, "SELECT pg_advisory_xact_lock(hashtext('ledgerline.retention'))");
            RetentionJob.Run run = job.run().await().atMost(DEADLINE);
            assertTrue(run.busy(), "another session holds the retention lock");
            assertEquals(0, run.created());
            c.rollback();
        }
        assertFalse(await().atMost(DEADLINE).until(() -> job.run().await().atMost(DEADLINE), r -> !r.busy()).busy());
    }

    /**
     * The transfer and its events as if written at {@code at}: behind the triggers, which refuse both changes.
     * The transfer's id, which carries its creation time, changes with it: returns the new one.
     */
    private static String backdate(String id, Instant at) {
        return Db.createdBack(id, "'" + at + "'::timestamptz", "'" + at + "'::timestamptz",
                "UPDATE transfer_events SET at = '" + at + "'::timestamptz + version * interval '1 second' WHERE transfer_id = '%s'");
    }

    private static void event(String id, String status, Instant at) {
        Db.update("INSERT INTO transfer_events (transfer_id, version, to_status, actor, reason, feed_xid, at) "
                + "VALUES (?::uuid, 0, ?, 'test', 'made by the test', pg_current_xact_id(), ?::timestamptz)", id, status, at.toString());
    }

    private static long events(String id) {
        return Db.count("SELECT count(*) FROM transfer_events WHERE transfer_id = ?::uuid", id);
    }

    private static Set<String> partitionsOf(String... ids) {
        return Db.query("SELECT DISTINCT tableoid::regclass::text AS p FROM transfer_events WHERE transfer_id = ANY (?::uuid[])",
                        "{" + String.join(",", ids) + "}").stream()
                .map(r -> (String) r.get("p")).collect(Collectors.toSet());
    }
}
