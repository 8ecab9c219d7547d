package dev.ledgerline.transfers.pipeline;

import dev.ledgerline.devstack.LocalRedis;
import dev.ledgerline.transfers.metrics.ServiceMeters;
import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Await;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.Rows;
import dev.ledgerline.transfers.support.RedisStats;
import dev.ledgerline.transfers.support.Sandbox;
import dev.ledgerline.transfers.support.Statements;
import dev.ledgerline.transfers.support.TestStack;
import dev.ledgerline.transfers.transfer.AdoptedServer;
import dev.ledgerline.transfers.transfer.TransferRepository;
import dev.ledgerline.transfers.redis.RedisCommands;
import dev.ledgerline.transfers.transfer.Claim;
import dev.ledgerline.transfers.transfer.Seen;
import dev.ledgerline.transfers.transfer.TransferStatus;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static dev.ledgerline.transfers.support.Api.writer;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A PostgreSQL that forgets commits it acknowledged — a failover to an asynchronous replica, a crash with
 * {@code synchronous_commit=off}, a restore — must not make one intent two payments. Each test takes the loss
 * from outside, behind the service's back (rows deleted or put back with {@code session_replication_role =
 * replica}, which skips the triggers, as a database that never saw the commit would look), and asserts what a
 * user and the provider can observe: the answers, the rows, and the executions at the provider. Where a final row is
 * lost, the server also changes (a restart), as it does with every real loss of commits: a final row the adopted
 * server wrote is not read again ({@code AdoptedServer}).
 *
 * <p>The provider timeout is 4 s here, so a send can be held in flight for seconds and still execute before its
 * deadline: the window a lost claim would reopen.
 */
@QuarkusTest
@TestProfile(LostCommitTest.SlowProvider.class)
class LostCommitTest {

    public static class SlowProvider implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("ledgerline.provider.timeout-ms", "4000",
                    "ledgerline.pipeline.lease", "PT8S",
                    "ledgerline.pipeline.lock-ttl", "PT8S");
        }
    }

    private static final Duration DEADLINE = Duration.ofSeconds(30);

    /** The one-row check of a final replay, as pg_stat_statements spells it. */
    private static final String PROBE = "SELECT $_ FROM transfers WHERE id = $1 AND";

    @Inject
    @ServiceMeters
    MeterRegistry metrics;

    @Inject
    TransferRepository repository;

    @Inject
    RedisCommands redis;

    @Inject
    AdoptedServer adoptedServer;

    @AfterEach
    void healthy() throws Exception {
        Sandbox.reset();
        TestStack.heal();
    }

    @Test
    void aRetryAfterTheDatabaseLostTheTransferPaysOnce() {
        // one payment, completed and answered; then the database forgets it (the client's own row included)
        Lost lost = sentThenLost("lost-", 7_301);
        String alice = lost.token(), key = lost.key(), body = lost.body(), id = lost.id(), reference = lost.reference();
        long[] paid = lost.paid();
        assertEquals(0, Db.count("SELECT count(*) FROM transfers WHERE id = ?::uuid", id));
        assertEquals(paid[0] + 7_301, Api.balance(alice, "EUR")[0], "the posting was lost with the row");

        // the client, which never saw its answer, retries the same key and body
        var retry = Api.post(alice, key, body);
        retry.then().statusCode(201).header("Idempotent-Replayed", "true");
        assertEquals(id, retry.path("id"), "the retry names the transfer the provider already paid");
        assertEquals(reference, Rows.reference(id), "the row created again carries the same provider reference");
        Await.status(id, "sent", DEADLINE);
        assertEquals(1, Sandbox.executions(reference), "the provider executed the intent once");
        assertEquals(1, executedOrdersOf(7_301), "no other reference paid the same intent: " + ordersOf(7_301));
        List<String> reasons = Rows.reasons(id);
        assertTrue(reasons.get(0).contains("looked up") || reasons.get(0).contains("look up"),
                "the re-created row starts with a lookup, not a send: " + reasons);
        assertEquals(List.of("reconciling", "sent"), Rows.history(id), "settled by the lookup, never sent again");
        // the re-created row held its amount again, and the lookup's fence posted it: the money left the account once
        assertEquals(List.of(paid[0], 0L, paid[0]), List.of(Api.balance(alice, "EUR")[0], Api.balance(alice, "EUR")[1],
                Api.balance(alice, "EUR")[2]), "EUR posted, held, available");
        assertEquals(List.of("hold", "post"), entryKinds(id));
    }

    @Test
    void aRetryAfterTheDatabaseAndRedisBothLostTheTransferStillPaysOnce() {
        // a lost commit, and a Redis that lost the idempotency record too (restarted empty): nothing names the old id,
        // so the retry creates a new row; the provider reference, derived from the intent, is the one it already paid
        Lost lost = sentThenLost("lost-both-", 7_313);
        String alice = lost.token(), key = lost.key(), body = lost.body(), reference = lost.reference();
        redis.execute("FLUSHALL").await().atMost(Duration.ofSeconds(5));

        var retry = Api.post(alice, key, body);
        retry.then().statusCode(201);
        String again = retry.path("id");
        assertEquals(reference, Rows.reference(again), "the new row carries the reference the provider knows");
        Await.status(again, "sent", DEADLINE);
        assertEquals(1, Sandbox.executions(reference), "the provider executed the intent once");
        assertEquals(1, executedOrdersOf(7_313), "no other reference paid the same intent: " + ordersOf(7_313));
    }

    /**
     * The database lost the transfer with its server's commits, and the retry's read of the idempotency record does not
     * answer (Redis stalled): nothing names the old id, and the key has no row. Against a provider that executes every
     * send it receives, the new row must still be looked up before it is sent.
     */
    @Test
    void aRetryWhoseRedisReadDoesNotAnswerAfterTheDatabaseLostTheTransferPaysOnce() throws Exception {
        Lost lost = sentThenLost("lost-unseen-", 7_314);
        String alice = lost.token(), key = lost.key(), body = lost.body(), reference = lost.reference();
        long[] paid = lost.paid();
        serverChanged();
        Sandbox.faults(Map.of("idempotent", false));

        LocalRedis server = TestStack.current().redis();
        server.pause();
        io.restassured.response.Response retry;
        try {
            retry = Api.post(alice, key, body);
        } finally {
            server.resume();
        }
        retry.then().statusCode(201);
        String again = retry.path("id");
        assertEquals(reference, Rows.reference(again), "the new row carries the reference the provider paid under");
        Await.status(again, "sent", DEADLINE);
        assertEquals(1, Sandbox.executions(reference), "the provider executed the intent once: " + Sandbox.orders(reference));
        assertEquals(1, executedOrdersOf(7_314), "no other reference paid the same intent: " + ordersOf(7_314));
        assertEquals("reconciling", retry.path("status"), "answered as a transfer to look up first");
        assertEquals(List.of("reconciling", "sent"), Rows.history(again), "settled by the lookup, never sent again");
        assertTrue(Rows.reasons(again).get(0).contains("look up before any send"), Rows.reasons(again).toString());
        long[] after = Api.balance(alice, "EUR");
        assertEquals(List.of(paid[0], 0L), List.of(after[0], after[1]), "EUR posted and held: the money left once");

        // and the same key answers that transfer from now on
        Api.post(alice, key, body).then().statusCode(201).header("Idempotent-Replayed", "true").body("id", equalTo(again));
    }

    /**
     * Without Redis, after a server change, a transfer to send now starts with a lookup (the provider does not know it:
     * it is sent after it), while one scheduled an hour out is an ordinary pending transfer its owner can cancel: the
     * same intent lost would not have been due yet, so nothing of it can have been sent.
     */
    @Test
    void withoutRedisAfterAServerChangeATransferDueNowIsLookedUpFirstAndAScheduledOneStaysCancellable() throws Exception {
        serverChanged();
        String alice = writer("unseen-" + UUID.randomUUID());
        String inAnHour = """
                {"amount": 7316, "currency": "EUR", "destination": {"iban": "%s", "name": "Ada Lovelace"},
                 "description": "Rent December", "executeAt": "%s"}""".formatted(Api.IBAN,
                Instant.now().plus(Duration.ofHours(1)).truncatedTo(java.time.temporal.ChronoUnit.MILLIS));
        LocalRedis server = TestStack.current().redis();
        io.restassured.response.Response scheduled;
        io.restassured.response.Response due;
        server.pause();
        try {
            scheduled = Api.post(alice, Api.newKey(), inAnHour);
            due = Api.post(alice, Api.newKey(), Api.body(7_317));
        } finally {
            server.resume();
        }
        scheduled.then().statusCode(201).body("status", equalTo("pending"));
        due.then().statusCode(201).body("status", equalTo("reconciling"));
        String dueId = due.path("id");

        Api.as(alice).post("/v1/transfers/" + scheduled.path("id") + "/cancel").then().statusCode(200)
                .body("status", equalTo("cancelled"));
        Await.status(dueId, "sent", DEADLINE);
        assertEquals(List.of("reconciling", "processing", "sent"), Rows.history(dueId));
        assertEquals("lookup: not found, resending", Rows.reasons(dueId).get(1));
        Sandbox.exactlyOneExecution(dueId);
    }

    /**
     * Which rows accepted without Redis start with a lookup: only where the database may have lost a row of the key with
     * its server's commits. On a database that has had no other server, or whose server changed longer ago than the
     * provider remembers a reference, the row is an ordinary pending one; a change within that window makes it
     * reconciling, looked up no earlier than one send window after the adoption, with the provider's key window counted
     * from the newest key the server kept from before it.
     */
    @Test
    void aTransferAcceptedWithoutRedisStartsWithALookupOnlyWhereTheDatabaseMayHaveLostItsKey() {
        List<String> made = new ArrayList<>();
        String adoptedAt = (String) Db.query("SELECT adopted_at::text AS at FROM database_epochs "
                + "WHERE started_at = pg_postmaster_start_time()").get(0).get("at");
        try {
            Db.update("DELETE FROM database_epochs WHERE started_at <> pg_postmaster_start_time()");
            assertEquals("pending", insertedUnseen(made), "a database that never changed servers lost nothing");

            // a server before this one, adopted two days ago; this one was adopted minutes ago at most
            Db.update("INSERT INTO database_epochs (started_at, adopted_at) VALUES (now() - interval '2 days', now() - interval '2 days')");
            assertEquals("reconciling", insertedUnseen(made));
            String looked = made.get(made.size() - 1);
            Map<String, Object> row = Db.query("SELECT t.send_not_after >= t.created_at AS not_before_its_creation, "
                    + "t.send_not_after >= e.adopted_at + ? * interval '1 millisecond' AS a_window_after_the_adoption, "
                    + "t.next_attempt_at = t.send_not_after + ? * interval '1 millisecond' AS then_settled, "
                    + "t.first_sent_at = coalesce((SELECT max(k.created_at) FROM transfer_keys k WHERE k.created_at < e.adopted_at), "
                    + "t.created_at) AS key_window_from_the_newest_key_kept "
                    + "FROM transfers t, database_epochs e WHERE t.id = ?::uuid AND e.started_at = pg_postmaster_start_time()",
                    repository.sendWindowMs(), repository.settleMs(), looked).get(0);
            assertEquals(Map.of("not_before_its_creation", true, "a_window_after_the_adoption", true, "then_settled", true,
                    "key_window_from_the_newest_key_kept", true), row);
            assertTrue(Rows.reasons(looked).get(0).contains("look up before any send"), Rows.reasons(looked).toString());

            // this server adopted longer ago than the provider remembers a reference: it kept every key since
            Db.update("UPDATE database_epochs SET adopted_at = now() - interval '2 days' WHERE started_at = pg_postmaster_start_time()");
            assertEquals("pending", insertedUnseen(made), "a change the provider no longer remembers is no reason");
        } finally {
            Db.update("UPDATE database_epochs SET adopted_at = ?::timestamptz WHERE started_at = pg_postmaster_start_time()", adoptedAt);
            for (String id : made) {
                forget("DELETE FROM transfer_events WHERE transfer_id = '" + id + "'",
                        "DELETE FROM ledger_entries WHERE transfer_id = '" + id + "'",
                        "DELETE FROM transfers WHERE id = '" + id + "'",
                        "DELETE FROM transfer_keys WHERE transfer_id = '" + id + "'");
            }
        }
    }

    /**
     * Inserts a transfer of a new key as a request accepted without Redis is: its status. Its id is added to
     * {@code made}, which the test deletes before any worker is due to take one (a pending grace of an hour, a lookup
     * the settle time away).
     */
    private String insertedUnseen(List<String> made) {
        String key = Api.newKey();
        var t = repository.insertLookupFirst(new dev.ledgerline.transfers.transfer.NewTransfer(UUID.randomUUID(), "unseen-" + key,
                key, "fp", 7_315, "EUR", Api.IBAN, "Ada Lovelace", null, "ll_" + key.replace("-", ""), null),
                Duration.ofHours(1), "test").await().atMost(HandMadeRows.WAIT);
        assertNotNull(t);
        made.add(t.id().toString());
        return t.status().db();
    }

    @Test
    void aReCreatedTransferTheFundsNoLongerCoverIsPostedAsADebtThatBlocksNewTransfersUntilPaid() {
        // 600,000 sent and lost with its posting; meanwhile 700,000 more went out of the 1,000,000 opening
        String owner = "owes-" + UUID.randomUUID();
        String token = writer(owner);
        String key = Api.newKey();
        String body = Api.body(600_000);
        String id = Api.post(token, key, body).then().statusCode(201).extract().path("id");
        Await.status(id, "sent", DEADLINE);
        forgetSent(id, owner, 600_000);
        Await.status(Api.create(token, 700_000), "sent", DEADLINE);
        assertEquals(300_000, Api.balance(token, "EUR")[2]);

        // the retry re-creates the first, which the provider had paid: its hold is owed past the 300,000 left
        Api.post(token, key, body).then().statusCode(201).header("Idempotent-Replayed", "true").body("id", equalTo(id));
        Await.status(id, "sent", DEADLINE);
        assertEquals(1, Sandbox.executions(Rows.reference(id)), "looked up, not sent again");
        long[] owing = Api.balance(token, "EUR");
        assertEquals(List.of(-300_000L, 0L, -300_000L), List.of(owing[0], owing[1], owing[2]), "EUR posted, held, available");
        assertEquals(300_000, debt(owner));
        assertEquals(List.of("hold", "post"), entryKinds(id));

        // owing, the account takes no new transfer; a credit pays the debt first, then the rest is spendable
        Api.post(token, Api.newKey(), Api.body(1)).then().statusCode(422)
                .body("type", equalTo(dev.ledgerline.transfers.problem.ProblemType.INSUFFICIENT_FUNDS.uri()));
        Api.as(Api.token("ledger-booking", List.of("accounts.credit"))).contentType("application/json")
                .header("Idempotency-Key", Api.newKey()).body("{\"amount\": 300001, \"currency\": \"EUR\", \"reference\": \"repay\"}")
                .post("/v1/accounts/" + owner + "/credits").then().statusCode(201);
        assertEquals(0, debt(owner));
        assertEquals(1, Api.balance(token, "EUR")[2]);
        Await.status(Api.create(token, 1), "sent", DEADLINE);
        Api.post(token, Api.newKey(), Api.body(1)).then().statusCode(422);
    }

    @Test
    void aReplayAnsweredFromAFinalEntryRestoresTheRowTheDatabaseLost() throws Exception {
        // sent, and replayed once, so Redis keeps the whole final transfer; then the database forgets it
        Sent r = sentAndReplayedOnce("restored-", 7_304);
        String owner = r.owner(), alice = r.token(), key = r.key(), body = r.body(), id = r.id();
        String reference = Rows.reference(id);
        long[] paid = Api.balance(alice, "EUR");
        forgetSent(id, owner, 7_304);
        serverChanged();

        // the retry is answered from the final entry, and the transfer it names is there again, as it was
        var retry = Api.post(alice, key, body);
        retry.then().statusCode(201).header("Idempotent-Replayed", "true").body("status", equalTo("sent"));
        assertEquals(id, retry.path("id"));
        Api.get(alice, id).then().statusCode(200).body("status", equalTo("sent")).body("amount", equalTo(7_304));
        assertEquals(reference, Rows.reference(id), "restored with the reference the provider paid under");
        assertEquals(List.of("sent"), Rows.history(id), "restored final, never sent or looked up again");
        assertTrue(Rows.reasons(id).get(0).contains("restored"), Rows.reasons(id).toString());
        assertEquals(1, Sandbox.executions(reference), "the provider executed the intent once");
        // and posted again, as the lost fence had: the account is where it was before the database forgot
        assertEquals(paid[0], Api.balance(alice, "EUR")[0]);
        assertEquals(0, Api.balance(alice, "EUR")[1]);
        assertEquals(List.of("hold", "post"), entryKinds(id));
    }

    /**
     * Replays that arrive together check their rows together: while one check is in flight the next ones wait and
     * go as one statement. Held behind a lock on the table so that they do arrive together; the rows the database
     * lost among them are each restored once, and every replay names a transfer {@code GET} finds.
     */
    @Test
    void concurrentFinalReplaysCheckTheirRowsInOneStatementAndRestoreEachLostRowOnce() throws Exception {
        String owner = "batched-" + UUID.randomUUID();
        String alice = writer(owner);
        List<String> keys = new ArrayList<>();
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            String key = Api.newKey();
            String id = Api.post(alice, key, Api.body(7_510 + i)).then().statusCode(201).extract().path("id");
            keys.add(key);
            ids.add(id);
        }
        for (int i = 0; i < 8; i++) {
            Await.status(ids.get(i), "sent", DEADLINE);
            // the first replay after sent keeps the final transfer in the entry
            Api.post(alice, keys.get(i), Api.body(7_510 + i)).then().statusCode(201).header("Idempotent-Replayed", "true");
        }
        long[] paid = Api.balance(alice, "EUR");
        List<List<String>> histories = new ArrayList<>();
        for (String id : ids) {
            histories.add(Rows.history(id));
        }
        for (int i = 0; i < 3; i++) {
            forgetSent(ids.get(i), owner, 7_510 + i);
        }
        serverChanged();
        long batched = Statements.calls("unnest($1::uuid[])");
        long single = Statements.calls(PROBE);
        long gets = RedisStats.calls(redis, "get");

        ExecutorService clients = Executors.newFixedThreadPool(16);
        List<Future<io.restassured.response.Response>> answers = new ArrayList<>();
        try (Connection locker = Db.connect()) {
            locker.setAutoCommit(false);
            locker.createStatement().execute("LOCK TABLE transfers IN ACCESS EXCLUSIVE MODE");
            for (int i = 0; i < 16; i++) {
                int k = i % 8;
                answers.add(clients.submit(() -> Api.post(alice, keys.get(k), Api.body(7_510 + k))));
            }
            // the first check waits on the lock; the others, their entries read, queue behind it in the service
            Awaitility.await("a check waits on the lock").atMost(DEADLINE).pollInterval(Duration.ofMillis(10))
                    .until(() -> Db.count("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                            + "AND query LIKE '%FROM transfers WHERE id = $1%'") > 0);
            Awaitility.await("every replay read its entry").atMost(DEADLINE).pollInterval(Duration.ofMillis(10))
                    .until(() -> RedisStats.calls(redis, "get") >= gets + 16);
            locker.rollback();
        }
        try {
            for (int i = 0; i < 16; i++) {
                var answer = answers.get(i).get(30, TimeUnit.SECONDS);
                answer.then().statusCode(201).header("Idempotent-Replayed", "true").body("status", equalTo("sent"));
                assertEquals(ids.get(i % 8), answer.path("id"));
            }
        } finally {
            clients.shutdownNow();
        }
        assertTrue(Statements.calls("unnest($1::uuid[])") > batched, "the checks that waited went in one statement");
        long probes = Statements.calls("unnest($1::uuid[])") - batched + Statements.calls(PROBE) - single;
        assertTrue(probes < 16, "fewer statements than replays: " + probes);

        // a check that waited past its bound is owed and paid by the next round: the rows are back either way
        Awaitility.await("the lost rows are restored").atMost(DEADLINE).pollInterval(Duration.ofMillis(100))
                .until(() -> Db.count("SELECT count(*) FROM transfers WHERE user_id = ?", owner) == 8);
        for (int i = 0; i < 8; i++) {
            Api.get(alice, ids.get(i)).then().statusCode(200).body("status", equalTo("sent")).body("amount", equalTo(7_510 + i));
            // the lost ones restored once, final; the others as they were before the replays
            assertEquals(i < 3 ? List.of("sent") : histories.get(i), Rows.history(ids.get(i)));
            assertEquals(1, Sandbox.executions(Rows.reference(ids.get(i))), "the provider executed each intent once");
        }
        assertEquals(paid[0], Api.balance(alice, "EUR")[0], "the account is where it was before the database forgot");
    }

    /**
     * A row that became final on the server the pipeline adopted last, after its adoption, cannot have been lost
     * without a server change: its replays are answered from Redis alone. Once another server is adopted, the same
     * replay reads its row again.
     */
    @Test
    void aFinalReplayIsAnsweredWithoutReadingARowTheAdoptedServerMadeFinal() throws Exception {
        // final later than the adoption by more than the clock-skew bound (2 s here), as a row of an older server is not
        Awaitility.await("the server was adopted over 3 s ago").atMost(DEADLINE).pollInterval(Duration.ofMillis(100))
                .until(() -> Db.count("SELECT count(*) FROM database_epochs WHERE started_at = pg_postmaster_start_time() "
                        + "AND adopted_at < now() - interval '3 seconds'") == 1);
        instanceSeesTheAdoptedServer();
        // the first replay after sent reads the row and keeps the final transfer in the entry
        Sent r = sentAndReplayedOnce("kept-", 7_307);
        String alice = r.token(), key = r.key(), body = r.body(), id = r.id();

        long checks = finalRowChecks();
        double notNeeded = finalChecksNotNeeded();
        for (int i = 0; i < 5; i++) {
            var replay = Api.post(alice, key, body);
            replay.then().statusCode(201).header("Idempotent-Replayed", "true").body("status", equalTo("sent"));
            assertEquals(id, replay.path("id"));
        }
        assertEquals(checks, finalRowChecks(), "no replay read its row");
        assertEquals(notNeeded + 5, finalChecksNotNeeded(), 0.0);

        serverChanged();
        Api.post(alice, key, body).then().statusCode(201).header("Idempotent-Replayed", "true").body("status", equalTo("sent"));
        long afterRestart = finalRowChecks();
        assertTrue(afterRestart > checks, "on another server the replay reads its row");
        assertEquals(notNeeded + 5, finalChecksNotNeeded(), 0.0);
        // found there, it is not read again while that server stays adopted
        for (int i = 0; i < 3; i++) {
            Api.post(alice, key, body).then().statusCode(201).header("Idempotent-Replayed", "true");
        }
        assertEquals(afterRestart, finalRowChecks(), "read once on the new server, not on every replay");
        assertEquals(notNeeded + 8, finalChecksNotNeeded(), 0.0);
        assertEquals(1, Sandbox.executions(Rows.reference(id)), "the provider executed the intent once");
    }

    @Test
    void aFinalReplayTheDatabaseCouldNotCheckRestoresTheRowOnceTheDatabaseAnswers() throws Exception {
        Sent r = sentAndReplayedOnce("restored-", 7_306);
        String owner = r.owner(), alice = r.token(), key = r.key(), body = r.body(), id = r.id();
        String reference = Rows.reference(id);
        forgetSent(id, owner, 7_306);

        // the client retries while the database is down (right after a crash, when retries come): Redis answers,
        // and the check the replay could not run outlives the request
        TestStack.current().postgres().stop();
        try {
            var retry = Api.post(alice, key, body);
            retry.then().statusCode(201).header("Idempotent-Replayed", "true").body("status", equalTo("sent"));
            assertEquals(id, retry.path("id"));
        } finally {
            TestStack.current().postgres().startAgain();
        }

        // nobody asks again: the row comes back all the same
        Awaitility.await("the lost final row is restored").atMost(DEADLINE).pollInterval(Duration.ofMillis(100))
                .until(() -> Db.count("SELECT count(*) FROM transfers WHERE id = '" + id + "'") == 1);
        Api.get(alice, id).then().statusCode(200).body("status", equalTo("sent")).body("amount", equalTo(7_306));
        assertEquals(reference, Rows.reference(id));
        assertEquals(List.of("sent"), Rows.history(id), "restored final, never sent or looked up again");
        assertEquals(1, Sandbox.executions(reference), "the provider executed the intent once");
    }

    @Test
    void aLostClaimNeitherReopensTheInTransitWindowNorLetsTheOldFenceLand() {
        // a provider that executes every send it receives; the first send travels 2.5 s and executes before its 4 s deadline
        Sandbox.faults(Map.of("idempotent", false, "holdMs", 2500, "holdRate", 1.0));
        double staleBefore = staleWrites();
        String id = Api.create(writer("alice"), 7_302);
        Awaitility.await("the first send is claimed").atMost(DEADLINE).pollInterval(Duration.ofMillis(20))
                .until(() -> "processing".equals(Await.dbStatus(id)));

        // the database fails over and the new primary never saw the claim: the row is pending at version 0 again,
        // and the server answering is not one the pipeline has adopted
        forget("DELETE FROM transfer_events WHERE transfer_id = '" + id + "' AND version > 0",
                "UPDATE transfers SET status = 'pending', version = 0, previous_status = NULL, claimed_by = NULL, "
                        + "claim_token = NULL, lease_expires_at = NULL, send_not_after = NULL, first_sent_at = NULL, "
                        + "attempts = 0, sends = 0, next_attempt_at = now() WHERE id = '" + id + "'",
                "DELETE FROM database_epochs");

        // the held send executes and its worker fences: that fence must change nothing on the row (waiting for
        // either outcome, so a fence that lands fails the assertion below instead of running out the wait)
        Awaitility.await("the first worker's fence comes back").atMost(DEADLINE).pollInterval(Duration.ofMillis(20))
                .until(() -> staleWrites() > staleBefore || version(id) > 1);
        assertFalse(Rows.reasons(id).contains("provider completed"),
                "the old worker's fence landed: " + Rows.reasons(id));

        Await.status(id, "sent", DEADLINE);
        String reference = Rows.reference(id);
        assertEquals(1, Sandbox.executions(reference), "the provider executed the transfer once: " + Sandbox.orders(reference));
        List<String> reasons = Rows.reasons(id);
        assertEquals(List.of("pending", "reconciling", "sent"), Rows.history(id), "looked up, never sent again: " + reasons);
        assertEquals("lookup: completed", reasons.get(reasons.size() - 1));
    }

    @Test
    void aRestartedDatabaseIsAdoptedAndItsOpenTransfersAreLookedUpBeforeAnySend() throws Exception {
        // an open transfer whose claim the crash may have taken with it (nobody due to take it before the restart)
        String id = UUID.randomUUID().toString();
        Db.update("INSERT INTO transfers (id, user_id, idempotency_key, request_fingerprint, amount, currency, destination_iban, "
                        + "destination_name, provider_reference, status, next_attempt_at, last_actor) "
                        + "VALUES (?::uuid, 'alice', ?, 'fp', 7303, 'EUR', ?, 'Ada Lovelace', ?, 'pending', now() + interval '1 hour', 'test')",
                id, "restart-" + id, Api.IBAN, "ll_" + id.replace("-", ""));
        long epochs = Db.count("SELECT count(*) FROM database_epochs");

        TestStack.current().postgres().stop();
        TestStack.current().postgres().startAgain();

        Awaitility.await("the restarted server is adopted").atMost(DEADLINE).pollInterval(Duration.ofMillis(100))
                .until(() -> Db.count("SELECT count(*) FROM database_epochs") == epochs + 1);
        assertEquals(1, Db.count("SELECT count(*) FROM database_epochs WHERE started_at = pg_postmaster_start_time()"));
        Await.status(id, "sent", DEADLINE);
        // (a row inserted by hand has no event of its own: its history starts with the adoption)
        assertEquals(List.of("reconciling", "processing", "sent"), Rows.history(id));
        assertTrue(Rows.reasons(id).get(0).startsWith("database server changed"), Rows.reasons(id).toString());
        assertEquals("lookup: not found, resending", Rows.reasons(id).get(1));
        Sandbox.exactlyOneExecution(id);
        // and new transfers flow as before
        Await.status(Api.create(writer("alice"), 7_304), "sent", DEADLINE);
    }

    /**
     * A server the pipeline has not adopted (a failover, a restart, a restore) may have lost claims whose sends are
     * still in flight: no claim is taken on it until the sweeper adopted it, which sends every open row through a
     * lookup first. The row here has no schedule ({@code 'infinity'}), so adoption leaves it alone and only this
     * test's claim reaches it, a claim that was on its way when the server changed. A claim that is taken all the
     * same must have seen the server adopted: its moment (the start of its lease) is after the adoption's.
     */
    @Test
    void noClaimIsTakenWhileTheDatabaseServerIsNotAdopted() {
        Duration lease = Duration.ofSeconds(30);
        // the sweeper adopts the server within a round (1 s): a claim that comes after that is tried again
        for (int attempt = 0; attempt < 5; attempt++) {
            String id = HandMadeRows.insert("pending", 7_305, "NULL", "'infinity'");
            Seen seen = new Seen(UUID.fromString(id), TransferStatus.PENDING, 0);
            Db.update("DELETE FROM database_epochs");
            Claim claim = repository.claim(seen, "test", lease, "test: claim by hand").await().atMost(HandMadeRows.WAIT);
            if (claim == null) {
                Awaitility.await("the sweeper adopts the server").atMost(DEADLINE).pollInterval(Duration.ofMillis(50))
                        .until(() -> Db.count("SELECT count(*) FROM database_epochs WHERE started_at = pg_postmaster_start_time()") == 1);
                Claim adopted = repository.claim(seen, "test", lease, "test: claim by hand").await().atMost(HandMadeRows.WAIT);
                assertNotNull(adopted, "once the server is adopted, the row is claimed");
                HandMadeRows.finish(repository, adopted.id(), adopted.version(), adopted.token());
                return;
            }
            Instant claimedAt = HandMadeRows.claimedAt(claim, lease);
            HandMadeRows.finish(repository, claim.id(), claim.version(), claim.token());
            List<Map<String, Object>> epoch = Db.query(
                    "SELECT adopted_at FROM database_epochs WHERE started_at = pg_postmaster_start_time()");
            assertFalse(epoch.isEmpty(), "claimed at " + claimedAt + " on a server nobody adopted");
            Instant adoptedAt = ((Timestamp) epoch.get(0).get("adopted_at")).toInstant();
            assertTrue(adoptedAt.isBefore(claimedAt), "claimed at " + claimedAt + ", before the server was adopted at " + adoptedAt);
        }
        fail("the sweeper adopted the server before each of 5 claims: the refusal was never put to the test");
    }

    private static long version(String id) {
        return (Long) Db.query("SELECT version FROM transfers WHERE id = ?::uuid", id).get(0).get("version");
    }

    /** Posts {@code body} under {@code key} and waits until it is sent, executed once at the provider: its id. */
    private static String sentOnce(String token, String key, String body) {
        String id = Api.post(token, key, body).then().statusCode(201).extract().path("id");
        Await.status(id, "sent", DEADLINE);
        assertEquals(1, Sandbox.executions(Rows.reference(id)));
        return id;
    }

    /** A transfer of a new owner, sent and executed once. */
    private record Sent(String owner, String token, String key, String body, String id) {
    }

    private static Sent sentByANewOwner(String ownerPrefix, long amount) {
        String owner = ownerPrefix + UUID.randomUUID();
        String token = writer(owner);
        String key = Api.newKey();
        String body = Api.body(amount);
        return new Sent(owner, token, key, body, sentOnce(token, key, body));
    }

    /** A sent transfer of a new owner, and the one replay after {@code sent} that keeps the final transfer in its entry. */
    private static Sent sentAndReplayedOnce(String ownerPrefix, long amount) {
        Sent sent = sentByANewOwner(ownerPrefix, amount);
        Api.post(sent.token(), sent.key(), sent.body()).then().statusCode(201).header("Idempotent-Replayed", "true")
                .body("status", equalTo("sent"));
        return sent;
    }

    /**
     * A sent transfer of a new owner that the database then forgot ({@link #forgetSent}), as a client that never saw its
     * answer finds it: the provider reference it was paid under and the account's balances after it was paid.
     */
    private record Lost(String token, String key, String body, String id, String reference, long[] paid) {
    }

    private static Lost sentThenLost(String ownerPrefix, long amount) {
        Sent sent = sentByANewOwner(ownerPrefix, amount);
        String reference = Rows.reference(sent.id());
        long[] paid = Api.balance(sent.token(), "EUR");
        forgetSent(sent.id(), sent.owner(), amount);
        return new Lost(sent.token(), sent.key(), sent.body(), sent.id(), reference, paid);
    }

    /** Writes behind the service's back and the triggers', in one transaction, as a database that lost commits looks. */
    static void forget(String... statements) {
        Db.behindTheTriggers(statements);
    }

    /**
     * Forgets a sent transfer as a database that lost its commits does: the row, its key (written by the same statement),
     * its events, its hold and posting, and the posting's effect on the account (the opening, which an earlier commit
     * wrote, stays).
     */
    private static void forgetSent(String id, String owner, long amount) {
        forget("DELETE FROM transfer_events WHERE transfer_id = '" + id + "'",
                "DELETE FROM transfers WHERE id = '" + id + "'",
                "DELETE FROM transfer_keys WHERE transfer_id = '" + id + "'",
                "DELETE FROM ledger_entries WHERE transfer_id = '" + id + "'",
                "UPDATE accounts SET posted = posted + " + amount + " WHERE principal = '" + owner + "' AND currency = 'EUR'");
    }

    /**
     * The database comes back as another server, as after the crash, failover or restore that loses commits (a
     * database forgets commits only with its server): it is restarted, and the sweeper has adopted it. Rows that
     * became final before are then read by their replays ({@code AdoptedServer}).
     */
    private void serverChanged() throws Exception {
        TestStack.current().postgres().stop();
        TestStack.current().postgres().startAgain();
        Awaitility.await("the restarted server is adopted").atMost(DEADLINE).pollInterval(Duration.ofMillis(100))
                .until(() -> Db.count("SELECT count(*) FROM database_epochs WHERE started_at = pg_postmaster_start_time()") == 1);
        instanceSeesTheAdoptedServer();
    }

    /**
     * The adoption in the database is not yet what the instance knows: it learns it from the sweeper's adoption or its
     * next look, and its change listener, reconnecting meanwhile, must not unlearn it. Only then can a test tell a row
     * read once per adoption from a row read on every replay.
     */
    private void instanceSeesTheAdoptedServer() {
        Awaitility.await("the instance vouches for the server adopted now").atMost(DEADLINE).pollInterval(Duration.ofMillis(50))
                .until(() -> {
                    Instant seen = adoptedServer.adoptedAt();
                    return seen != null && seen.equals(((Timestamp) Db.query("SELECT adopted_at FROM database_epochs "
                            + "WHERE started_at = pg_postmaster_start_time()").get(0).get("adopted_at")).toInstant());
                });
    }

    /** The calls so far of the final-row checks: the one-row probe and the batched one. */
    private static long finalRowChecks() {
        return Statements.calls(PROBE) + Statements.calls("unnest($1::uuid[])");
    }

    private double finalChecksNotNeeded() {
        var counter = metrics.find("ledgerline.idempotency").tag("result", "final_check_not_needed").counter();
        return counter == null ? 0 : counter.count();
    }

    /** The kinds of a transfer's ledger entries, oldest first. */
    private static List<String> entryKinds(String id) {
        return Db.query("SELECT kind FROM ledger_entries WHERE transfer_id = ?::uuid ORDER BY id", id).stream()
                .map(r -> (String) r.get("kind")).toList();
    }

    private static long debt(String owner) {
        return (Long) Db.query("SELECT debt FROM accounts WHERE principal = ? AND currency = 'EUR'", owner).get(0).get("debt");
    }

    private double staleWrites() {
        var counter = metrics.find("ledgerline.fence.stale").counter();
        return counter == null ? 0 : counter.count();
    }

    private static List<Map<String, Object>> ordersOf(long amount) {
        List<Map<String, Object>> all = given().get("/sandbox/provider/orders").then().statusCode(200).extract().jsonPath().getList("$");
        return all.stream().filter(o -> ((Number) o.get("amount")).longValue() == amount).toList();
    }

    private static long executedOrdersOf(long amount) {
        return ordersOf(amount).stream().filter(o -> "executed".equals(o.get("outcome"))).count();
    }
}
