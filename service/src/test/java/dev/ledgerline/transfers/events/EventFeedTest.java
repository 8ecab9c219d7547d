package dev.ledgerline.transfers.events;

import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Await;
import dev.ledgerline.transfers.support.Db;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.notNullValue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * {@code GET /v1/events} through HTTP: a follower that always passes {@code nextCursor} sees every committed
 * transition once, each transfer's in version order, while writers race it and while transactions commit in
 * another order than the one they drew their ids in.
 */
@QuarkusTest
class EventFeedTest {

    private static final Duration DEADLINE = Duration.ofSeconds(60);
    private static String ops() {
        return Api.token("feed-follower", List.of("transfers.read.all"));
    }

    /** What a follower saw: events in arrival order, and the cursor to go on from. */
    static final class Follower {
        final List<Map<String, Object>> seen = new ArrayList<>();
        String cursor;

        /** One request: the page it answered, appended. */
        int poll(int waitSeconds) {
            var request = Api.as(ops()).queryParam("limit", 50);
            if (cursor != null) {
                request = request.queryParam("after", cursor);
            }
            if (waitSeconds > 0) {
                request = request.header("Prefer", "wait=" + waitSeconds);
            }
            Response r = request.get("/v1/events");
            r.then().statusCode(200);
            List<Map<String, Object>> events = r.path("events");
            seen.addAll(events);
            String next = r.path("nextCursor");
            if (next != null) {
                cursor = next;
            }
            return events.size();
        }

        /** To the feed's current end. */
        void catchUp() {
            while (poll(0) > 0) {
                // next page
            }
        }

        List<Map<String, Object>> of(Set<String> transfers) {
            return seen.stream().filter(e -> transfers.contains((String) e.get("transferId"))).toList();
        }
    }

    @Test
    void aFollowerSeesEveryTransitionOnceAndInVersionOrderWhileWritersRaceIt() throws Exception {
        Follower follower = new Follower();
        follower.catchUp();
        int writers = 6;
        int each = 8;
        ConcurrentLinkedQueue<String> created = new ConcurrentLinkedQueue<>();
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        List<Future<?>> done = new ArrayList<>();
        for (int w = 0; w < writers; w++) {
            String token = Api.writer("feed-writer-" + w);
            done.add(pool.submit(() -> {
                for (int i = 0; i < each; i++) {
                    created.add(Api.create(token, 8_100 + i));
                }
            }));
        }
        // the follower reads, held, while the writers write and the pipeline moves what they wrote
        long until = System.nanoTime() + DEADLINE.toNanos();
        Set<String> ids = new HashSet<>();
        while (System.nanoTime() < until) {
            follower.poll(1);
            boolean writing = done.stream().anyMatch(f -> !f.isDone());
            if (!writing) {
                ids.addAll(created);
                boolean allFinal = ids.stream().allMatch(id -> isFinal(Await.dbStatus(id)));
                int seen = follower.of(ids).size();
                int events = expected(ids).values().stream().mapToInt(List::size).sum();
                if (ids.size() == writers * each && allFinal && seen == events) {
                    break;
                }
            }
        }
        pool.shutdown();
        assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
        for (Future<?> f : done) {
            f.get();
        }
        assertEquals(writers * each, ids.size());
        assertEveryEventOnceInVersionOrder(follower.of(ids), expected(ids));
        Map<String, Object> first = follower.of(ids).get(0);
        assertEquals("pending", first.get("toStatus"));
        assertEquals("EUR", first.get("currency"));
        assertTrue(((String) first.get("principal")).startsWith("feed-writer-"));
    }

    @Test
    void aTransactionThatCommitsAfterALaterOneIsNotSkipped() throws Exception {
        Follower follower = new Follower();
        follower.catchUp();
        String startedAt = follower.cursor;
        String early = UUID.randomUUID().toString();
        String late = UUID.randomUUID().toString();
        try (Connection first = Db.connect(); Connection second = Db.connect()) {
            first.setAutoCommit(false);
            second.setAutoCommit(false);
            // the first transaction draws its id first, the second commits first
            create(first, early);
            create(second, late);
            second.commit();

            // a cursor on the transaction id alone (a sequence) moves past the first one's event...
            long plainCursor = plainSequenceCursor(startedAt);
            List<Map<String, Object>> plainSeen = new ArrayList<>(plainSequencePage(plainCursor));
            assertTrue(plainSeen.stream().anyMatch(e -> late.equals(e.get("transfer_id").toString())),
                    "the plain sequence sees the committed second transaction");
            plainCursor = plainSeen.stream().mapToLong(e -> Long.parseLong(e.get("feed_xid").toString())).max().orElseThrow();

            // ...while the feed holds everything past the open transaction back
            follower.poll(0);
            assertFalse(follower.of(Set.of(late, early)).stream().anyMatch(e -> true),
                    "the feed answered an event while an older transaction could still commit behind it");

            first.commit();
            plainSeen.addAll(plainSequencePage(plainCursor));
            assertFalse(plainSeen.stream().anyMatch(e -> early.equals(e.get("transfer_id").toString())),
                    "the plain sequence skips the transaction that committed late: the test would not tell a gap");
        }
        eventually(() -> follower.poll(1) >= 0 && follower.of(Set.of(early, late)).size() == 2);
        List<Map<String, Object>> ours = follower.of(Set.of(early, late));
        assertEquals(List.of(early, late), ours.stream().map(e -> (String) e.get("transferId")).toList(),
                "in the order of the ids the transactions drew, the late commit included");
    }

    @Test
    void aTransitionWrittenByAnOlderTransactionStillComesAfterTheVersionBeforeIt() throws Exception {
        Follower follower = new Follower();
        follower.catchUp();
        String id = UUID.randomUUID().toString();
        try (Connection setup = Db.connect()) {
            create(setup, id);
        }
        try (Connection older = Db.connect(); Connection newer = Db.connect()) {
            older.setAutoCommit(false);
            newer.setAutoCommit(false);
            create(older, UUID.randomUUID().toString()); // the older transaction draws its id first
            transition(newer, id, "processing", "feed_xid = greatest(feed_xid, pg_current_xact_id())");
            newer.commit();
            // the older transaction writes the next version: with its own id alone the version would go behind
            // the one before it, and the database refuses that
            var beforeRefusal = older.setSavepoint();
            SQLException refused = org.junit.jupiter.api.Assertions.assertThrows(SQLException.class,
                    () -> transition(older, id, "reconciling", "feed_xid = pg_current_xact_id()"));
            assertTrue(refused.getMessage().contains("without feed_xid"), refused.getMessage());
            older.rollback(beforeRefusal); // the same transaction, still holding the older id
            transition(older, id, "reconciling", "feed_xid = greatest(feed_xid, pg_current_xact_id())");
            older.commit();
        }
        eventually(() -> follower.poll(1) >= 0 && follower.of(Set.of(id)).size() == 3);
        assertEquals(List.of(0L, 1L, 2L), follower.of(Set.of(id)).stream()
                .map(e -> ((Number) e.get("version")).longValue()).toList());
    }

    @Test
    void badCursorsAndLimitsAreRefusedAndAnExpiredCursorIs410() {
        Api.as(ops()).queryParam("after", "not-a-cursor").get("/v1/events").then().statusCode(400)
                .body("type", equalTo("https://ledgerline.dev/problems/validation-failed"));
        Api.as(ops()).queryParam("limit", 1001).get("/v1/events").then().statusCode(400);
        Api.as(ops()).queryParam("limit", 0).get("/v1/events").then().statusCode(400);
        String old = "1.1." + UUID.randomUUID() + ".0." + Instant.now().minus(Duration.ofDays(31)).toEpochMilli();
        Api.as(ops()).queryParam("after", Base64.getUrlEncoder().withoutPadding().encodeToString(old.getBytes()))
                .get("/v1/events").then().statusCode(410)
                .body("type", equalTo("https://ledgerline.dev/problems/cursor-expired")).body("detail", notNullValue());
        // the feed is for internal services: an end user's token is not enough
        Api.as(Api.writer("feed-user")).get("/v1/events").then().statusCode(403);
    }

    @Test
    void aHeldRequestAnswersAsSoonAsAnEventIsThere() {
        Follower follower = new Follower();
        follower.catchUp();
        String writer = Api.writer("feed-held");
        long started = System.nanoTime();
        Thread later = new Thread(() -> {
            sleep(500);
            Api.create(writer, 8_200);
        });
        later.start();
        int n = follower.poll(10);
        long tookMs = (System.nanoTime() - started) / 1_000_000;
        assertTrue(n > 0, "a held request answered without the event written meanwhile");
        assertTrue(tookMs < 9_000, "the held request waited " + tookMs + " ms instead of answering the new event");
    }

    private static void eventually(java.util.concurrent.Callable<Boolean> until) throws Exception {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (System.nanoTime() < deadline) {
            if (until.call()) {
                return;
            }
        }
        fail("the follower did not see both transfers within " + DEADLINE);
    }

    private static void create(Connection c, String id) throws SQLException {
        Db.query(c, "INSERT INTO transfers (id, user_id, idempotency_key, request_fingerprint, amount, currency, "
                + "destination_iban, destination_name, provider_reference, status, next_attempt_at, last_actor) "
                + "VALUES (?::uuid, 'by-hand', ?, 'fp', 8300, 'EUR', ?, 'Ada Lovelace', ?, 'pending', 'infinity', 'test') "
                + "RETURNING id", id, "feed-" + id, Api.IBAN, "ll_" + id.replace("-", ""));
        Db.query(c, "INSERT INTO transfer_events (transfer_id, version, to_status, actor, reason, feed_xid) "
                + "SELECT id, 0, 'pending', 'test', 'accepted', feed_xid FROM transfers WHERE id = ?::uuid RETURNING version", id);
    }

    private static void transition(Connection c, String id, String to, String feedXid) throws SQLException {
        Db.query(c, "WITH w AS (UPDATE transfers SET previous_status = status, status = '" + to + "', version = version + 1, "
                + feedXid + ", last_actor = 'test', last_reason = 'by hand' WHERE id = ?::uuid "
                + "RETURNING id, version, status, previous_status, last_actor, last_reason, feed_xid) "
                + "INSERT INTO transfer_events (transfer_id, version, from_status, to_status, actor, reason, feed_xid) "
                + "SELECT id, version, previous_status, status, last_actor, last_reason, feed_xid FROM w RETURNING version", id);
    }

    /** The feed's cursor, read as a plain number: the last transaction id it had reached. */
    private static long plainSequenceCursor(String cursor) {
        return cursor == null ? 0 : Long.parseLong(new String(Base64.getUrlDecoder().decode(cursor)).split("\\.")[1]);
    }

    /** A follower that orders by the transaction id alone, with no horizon: what the feed must not be. */
    private static List<Map<String, Object>> plainSequencePage(long after) {
        return Db.query("SELECT transfer_id, version, feed_xid::text AS feed_xid FROM transfer_events "
                + "WHERE feed_xid > ?::text::xid8 ORDER BY feed_xid, transfer_id, version", Long.toString(after));
    }

    private static Map<String, List<Long>> expected(Set<String> ids) {
        Map<String, List<Long>> versions = new HashMap<>();
        for (String id : ids) {
            versions.put(id, Db.query("SELECT version FROM transfer_events WHERE transfer_id = ?::uuid ORDER BY version", id)
                    .stream().map(r -> ((Number) r.get("version")).longValue()).toList());
        }
        return versions;
    }

    private static void assertEveryEventOnceInVersionOrder(List<Map<String, Object>> seen, Map<String, List<Long>> expected) {
        Map<String, List<Long>> got = new HashMap<>();
        Set<String> eventIds = new HashSet<>();
        for (Map<String, Object> e : seen) {
            assertTrue(eventIds.add((String) e.get("id")), "event " + e.get("id") + " seen twice");
            got.computeIfAbsent((String) e.get("transferId"), k -> new ArrayList<>()).add(((Number) e.get("version")).longValue());
        }
        assertEquals(expected, got, "every (transfer, version) once, in version order");
    }

    private static boolean isFinal(String status) {
        return "sent".equals(status) || "failed".equals(status);
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
