package dev.ledgerline.transfers.pipeline;

import dev.ledgerline.transfers.config.Breaker;
import dev.ledgerline.transfers.provider.ProviderGuards;
import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Await;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.Metrics;
import dev.ledgerline.transfers.support.Rows;
import dev.ledgerline.transfers.support.Sandbox;
import dev.ledgerline.transfers.support.TestStack;
import dev.ledgerline.transfers.transfer.TransferRepository;
import dev.ledgerline.transfers.transfer.Seen;
import dev.ledgerline.transfers.transfer.TransferStatus;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static dev.ledgerline.transfers.support.Api.as;
import static dev.ledgerline.transfers.support.Api.writer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The lock → claim → send → fence pipeline against the sandbox provider in non-idempotent mode, so a
 * duplicate send would show up as a second execution.
 */
@QuarkusTest
class PipelineTest {

    private static final Duration DEADLINE = Duration.ofSeconds(20);

    @Inject
    ProviderGuards breakers;

    @Inject
    TransferRepository repository;

    @Inject
    TransferProcessor processor;

    @BeforeEach
    void nonIdempotentProvider() {
        Sandbox.faults(Map.of("idempotent", false));
    }

    @AfterEach
    void healthyProvider() {
        Sandbox.reset();
        TestStack.closeBreakers();
    }

    @Test
    void aTransferIsSentAndItsHistoryIsAPathOfTheStateMachine() {
        String id = Api.create(writer("alice"), 1250);
        Await.status(id, "sent", DEADLINE);

        var events = as(writer("alice")).get("/v1/transfers/" + id + "/events").then().statusCode(200).extract().jsonPath();
        assertEquals(List.of("pending", "processing", "sent"), events.getList("events.toStatus"));
        assertEquals(java.util.Arrays.asList(null, "pending", "processing"), events.getList("events.fromStatus"),
                "each event starts where the previous one ended");
        assertEquals(List.of(0, 1, 2), events.getList("events.version"));
        paidAsRequested(id, 1250);
    }

    /**
     * A transfer to send now is claimed by the statement that inserts it: its first two events, the accept's and the
     * claim's, are one transaction's (the same {@code at}, PostgreSQL's transaction time, and the same
     * {@code feed_xid}), which two statements could not be. The {@code 201} still shows the transfer as accepted,
     * {@code pending} at version 0, and the history is the same path as ever.
     */
    @Test
    void aTransferToSendNowIsClaimedByTheStatementThatInsertsIt() {
        var created = Api.post(writer("alice"), Api.newKey(), Api.body(1260)).then().statusCode(201)
                .header("ETag", "\"0\"").extract().jsonPath();
        assertEquals("pending", created.getString("status"));
        assertEquals(0, created.getInt("version"));
        String id = created.getString("id");
        Await.status(id, "sent", DEADLINE);

        List<Map<String, Object>> events = Db.query("SELECT version, from_status, to_status, actor, reason, at, feed_xid::text AS xid"
                + " FROM transfer_events WHERE transfer_id = ?::uuid ORDER BY version", id);
        assertEquals(3, events.size(), "accepted, claimed, sent: " + events);
        assertEquals("accepted", events.get(0).get("reason"));
        assertEquals("pending", events.get(1).get("from_status"));
        assertEquals("processing", events.get(1).get("to_status"));
        assertEquals(Dispatcher.ON_ACCEPT, events.get(1).get("reason"));
        assertEquals(events.get(0).get("at"), events.get(1).get("at"), "the accept and the claim in one transaction: " + events);
        assertEquals(events.get(0).get("xid"), events.get(1).get("xid"), "one transaction's feed_xid: " + events);
        assertFalse(events.get(1).get("at").equals(events.get(2).get("at")), "the fence is a transaction of its own");
        assertEquals(1L, ((Number) Db.query("SELECT sends FROM transfers WHERE id = ?::uuid", id).get(0).get("sends")).longValue());
        paidAsRequested(id, 1260);
    }

    /**
     * The state machine's refusals live in the database, for any writer, not only in the service's statements: a
     * final transfer cannot change, a version moves by exactly one, and transfers (with their history) are kept.
     */
    /**
     * Each forbidden write below keeps the event feed's order (it sets feed_xid as every transition must), so only the
     * rule under test can refuse it: without that, the feed's own rule refused them all, and a guard's other rules
     * could be removed with this test still green.
     */
    private static final String IN_FEED_ORDER = "feed_xid = greatest(feed_xid, pg_current_xact_id())";

    @Test
    void theDatabaseRefusesAChangeAfterAFinalStatusAVersionJumpAndADelete() {
        String id = Api.create(writer("alice"), 1275);
        Await.status(id, "sent", DEADLINE);

        RuntimeException terminal = org.junit.jupiter.api.Assertions.assertThrows(RuntimeException.class, () -> Db.update(
                "UPDATE transfers SET status = 'reconciling', version = version + 1, last_actor = 'test', " + IN_FEED_ORDER + " WHERE id = ?::uuid", id));
        assertTrue(String.valueOf(terminal.getCause()).contains("cannot change"), terminal.toString());
        org.junit.jupiter.api.Assertions.assertThrows(RuntimeException.class,
                () -> Db.update("DELETE FROM transfers WHERE id = ?::uuid", id));

        String open = java.util.UUID.randomUUID().toString();
        Db.update("INSERT INTO transfers (id, user_id, idempotency_key, request_fingerprint, amount, currency, destination_iban, "
                        + "destination_name, provider_reference, status, next_attempt_at, last_actor) "
                        + "VALUES (?::uuid, 'guard', ?, 'fp', 10, 'EUR', ?, 'Ada Lovelace', ?, 'pending', now() + interval '1 hour', 'test')",
                open, "guard-" + open, Api.IBAN, "ll_" + open.replace("-", ""));
        RuntimeException jump = org.junit.jupiter.api.Assertions.assertThrows(RuntimeException.class, () -> Db.update(
                "UPDATE transfers SET status = 'processing', version = version + 2, last_actor = 'test', " + IN_FEED_ORDER + " WHERE id = ?::uuid", open));
        assertTrue(String.valueOf(jump.getCause()).contains("version must move"), jump.toString());
        RuntimeException silent = org.junit.jupiter.api.Assertions.assertThrows(RuntimeException.class, () -> Db.update(
                "UPDATE transfers SET status = 'processing', last_actor = 'test' WHERE id = ?::uuid", open));
        assertTrue(String.valueOf(silent.getCause()).contains("without a new version"), silent.toString());

        Map<String, Object> row = Db.query("SELECT status, version FROM transfers WHERE id = ?::uuid", id).get(0);
        assertEquals("sent", row.get("status"));
        assertEquals(2L, row.get("version"));
    }

    @Test
    void aDefinitiveRejectionFailsTheTransferWithTheProvidersReasonAndIsNotRetried() {
        Sandbox.faults(Map.of("idempotent", false, "rejectRate", 1.0));
        String id = Api.create(writer("alice"), 1300);
        Await.status(id, "failed", DEADLINE);
        Api.get(writer("alice"), id).then().statusCode(200)
                .body("failureReason", org.hamcrest.Matchers.equalTo("insufficient funds at the sandbox"));

        Sandbox.reset();
        // two sweeps later (each proven by a witness transfer only a sweep picks up) nothing has touched it again
        sweptWitness();
        sweptWitness();
        Map<String, Object> row = Db.query("SELECT status, version, attempts FROM transfers WHERE id = ?::uuid", id).get(0);
        assertEquals("failed", row.get("status"));
        assertEquals(2L, row.get("version"));
        assertEquals(1, row.get("attempts"));
        assertEquals(0, Sandbox.executions(Rows.reference(id)));
    }

    @Test
    void aTimeoutAfterExecutingIsReconciledByLookupNotBySendingAgain() {
        Sandbox.faults(Map.of("idempotent", false, "timeoutRate", 1.0, "hangMs", 2500));
        String id = Api.create(writer("alice"), 1400);
        Await.status(id, "sent", DEADLINE);

        assertEquals(List.of("pending", "processing", "reconciling", "sent"), Rows.history(id));
        assertTrue(Rows.reasons(id).contains("lookup: completed"), "settled by the lookup: " + Rows.reasons(id));
        paidAsRequested(id, 1400);
    }

    @Test
    void aFailureBeforeExecutingIsResentWithTheSameReferenceAfterTheLookupFindsNothing() {
        Sandbox.faults(Map.of("idempotent", false, "errorBeforeExecuteRate", 1.0));
        String id = Api.create(writer("alice"), 1500);
        Await.status(id, "reconciling", DEADLINE);
        assertEquals(0, Sandbox.executions(Rows.reference(id)));

        Sandbox.faults(Map.of("idempotent", false));
        Await.status(id, "sent", DEADLINE);
        List<String> history = Rows.history(id);
        assertEquals(List.of("pending", "processing", "reconciling"), history.subList(0, 3));
        assertEquals(List.of("processing", "sent"), history.subList(history.size() - 2, history.size()));
        assertTrue(Rows.reasons(id).contains("lookup: not found, resending"), "resent after the lookup: " + Rows.reasons(id));
        paidAsRequested(id, 1500);
    }

    @Test
    void aProviderOutageOpensTheBreakerAndNoTransferFailsBecauseOfIt() {
        Sandbox.faults(Map.of("idempotent", false, "errorBeforeExecuteRate", 1.0, "lookupErrorRate", 1.0));
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 15; i++) {
            ids.add(Api.create(writer("outage"), 100 + i));
        }
        Awaitility.await("the provider breaker opens").atMost(DEADLINE)
                .until(() -> breakers.sendState() == Breaker.State.OPEN);
        assertEquals(1.0, Metrics.sum("ledgerline_provider_breaker_open", "breaker=\"send\""), "the breaker's gauge says so");
        // with the breaker open a new transfer is not claimed by its insert: it waits pending, one event, for the sweeper
        String waiting = Api.create(writer("outage"), 199);
        ids.add(waiting);
        var row = Db.query("SELECT status, version, claim_token FROM transfers WHERE id = ?::uuid", waiting).get(0);
        assertEquals("pending", row.get("status"), "inserted pending while the breaker is open: " + row);
        assertNull(row.get("claim_token"));
        assertEquals(1, Db.count("SELECT count(*) FROM transfer_events WHERE transfer_id = ?::uuid", waiting));
        assertEquals(0, Db.count("SELECT count(*) FROM transfers WHERE id = ANY(?::uuid[]) AND status IN ('failed', 'sent')",
                (Object) ids.toArray(String[]::new)), "a provider outage never fails a transfer");

        Sandbox.faults(Map.of("idempotent", false));
        Await.allTerminal(ids, Duration.ofSeconds(30));
        for (String id : ids) {
            assertEquals("sent", Await.dbStatus(id));
            Sandbox.exactlyOneExecution(id);
        }
        Awaitility.await("and back at 0 once the breaker closed").atMost(DEADLINE)
                .until(() -> Metrics.sum("ledgerline_provider_breaker_open", "breaker=\"send\"") == 0.0);
        // the per-call meters of the provider's HTTP client and of fault tolerance are off: the gauge and the service's own
        // provider meters are what is exported
        String page = Metrics.scrape();
        assertTrue(page.contains("ledgerline_provider_send_total{"), "the service's own meter of sends");
        assertFalse(page.contains("\nft_") || page.contains("\nhttp_client_requests"), "no ft_* or http_client_* meters");
    }

    /**
     * The model check's central finding: a worker acting on an old view of a row must not claim it. A stale
     * {@code Seen} — right status but an old version, or a status the row has left — gets no claim, and
     * the processor then calls no provider and changes nothing.
     */
    @Test
    void aClaimOnAStaleViewReturnsNothingAndCallsNoProvider() {
        String id = java.util.UUID.randomUUID().toString();
        String reference = "ll_" + id.replace("-", "");
        // a transfer another worker claimed (v1) and fenced to reconciling (v2); nothing is due for an hour
        Db.update("INSERT INTO transfers (id, user_id, idempotency_key, request_fingerprint, amount, currency, destination_iban, "
                        + "destination_name, provider_reference, status, next_attempt_at, last_actor) "
                        + "VALUES (?::uuid, 'stale-view', ?, 'fp', 10, 'EUR', ?, 'Ada Lovelace', ?, 'pending', now() + interval '1 hour', 'test')",
                id, "stale-" + id, Api.IBAN, reference);
        Db.update("UPDATE transfers SET status = 'processing', version = 1, feed_xid = greatest(feed_xid, pg_current_xact_id()), claimed_by = 'other', last_actor = 'other' WHERE id = ?::uuid", id);
        Db.update("UPDATE transfers SET status = 'reconciling', version = 2, feed_xid = greatest(feed_xid, pg_current_xact_id()), claimed_by = NULL, last_actor = 'other' WHERE id = ?::uuid", id);
        UUID uuid = UUID.fromString(id);

        assertNull(repository.claim(new Seen(uuid, TransferStatus.PENDING, 0), "stale-worker", Duration.ofSeconds(3), "test")
                .await().atMost(DEADLINE), "a pending view of a row that moved on");
        assertNull(repository.claim(new Seen(uuid, TransferStatus.RECONCILING, 1), "stale-worker", Duration.ofSeconds(3), "test")
                .await().atMost(DEADLINE), "the right status at an old version");
        assertEquals(TransferProcessor.Outcome.NOT_CLAIMABLE,
                processor.process(new Seen(uuid, TransferStatus.PENDING, 0), "test").await().atMost(DEADLINE));

        assertEquals(List.of(), Sandbox.orders(reference), "no send reached the provider");
        assertEquals(0, Sandbox.executions(reference));
        Map<String, Object> row = Db.query("SELECT status, version, claimed_by FROM transfers WHERE id = ?::uuid", id).get(0);
        assertEquals("reconciling", row.get("status"));
        assertEquals(2L, row.get("version"));
        assertNull(row.get("claimed_by"));
        // the control: the current view does claim, so the refusals above were about staleness
        assertNotNull(repository.claim(new Seen(uuid, TransferStatus.RECONCILING, 2), "current-worker", Duration.ofSeconds(3), "test")
                .await().atMost(DEADLINE));
    }

    @Test
    void theProviderRefusesASendThatArrivesAfterItsDeadline() {
        String reference = "ll_" + java.util.UUID.randomUUID().toString().replace("-", "");
        String late = java.time.OffsetDateTime.now().minusSeconds(1).toString();
        io.restassured.RestAssured.given().contentType("application/json").header("Idempotency-Key", reference)
                .header("Ledgerline-Not-After", late)
                .body("{\"amount\": 5, \"currency\": \"EUR\", \"destination\": {\"iban\": \"DE89370400440532013000\", \"name\": \"Ada\"}}")
                .post("/sandbox/provider/payments").then().statusCode(412);
        assertEquals(0, Sandbox.executions(reference), "a late send never executes");
    }

    /**
     * A pending row only the sweeper picks up (no instance dispatches it), waited for until it is sent: proof
     * that at least one sweep ran after this call.
     */
    static void sweptWitness() {
        String id = java.util.UUID.randomUUID().toString();
        Db.update("INSERT INTO transfers (id, user_id, idempotency_key, request_fingerprint, amount, currency, destination_iban, "
                        + "destination_name, provider_reference, status, next_attempt_at, last_actor) "
                        + "VALUES (?::uuid, 'witness', ?, 'fp', 10, 'EUR', ?, 'Ada Lovelace', ?, 'pending', now(), 'test')",
                id, "witness-" + id, Api.IBAN, "ll_" + id.replace("-", ""));
        Await.status(id, "sent", DEADLINE);
    }

    /** {@link Sandbox#exactlyOneExecution}, and the row holds what the client asked for in {@link Api#body(long)}. */
    static void paidAsRequested(String id, long amount) {
        Sandbox.exactlyOneExecution(id);
        Map<String, Object> row = Db.query("SELECT amount, currency, destination_iban, destination_name FROM transfers "
                + "WHERE id = ?::uuid", id).get(0);
        assertEquals(Map.of("amount", amount, "currency", "EUR", "destination_iban", Api.IBAN, "destination_name", "Ada Lovelace"),
                row, "the row holds the client's request");
    }
}
