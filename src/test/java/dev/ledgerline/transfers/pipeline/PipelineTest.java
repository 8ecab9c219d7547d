package dev.ledgerline.transfers.pipeline;

import dev.ledgerline.transfers.provider.ProviderClient;
import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Await;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.Sandbox;
import dev.ledgerline.transfers.support.TestStack;
import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.faulttolerance.api.CircuitBreakerMaintenance;
import io.smallrye.faulttolerance.api.CircuitBreakerState;
import jakarta.inject.Inject;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static dev.ledgerline.transfers.support.Api.as;
import static dev.ledgerline.transfers.support.Api.writer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The lock → claim → send → fence pipeline against the sandbox provider in non-idempotent mode, so a
 * duplicate send would show up as a second execution.
 */
@QuarkusTest
class PipelineTest {

    private static final Duration DEADLINE = Duration.ofSeconds(20);

    @Inject
    CircuitBreakerMaintenance breakers;

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
        assertEquals(List.of(0, 1, 2), events.getList("events.version"));
        exactlyOneExecution(id);
    }

    @Test
    void aDefinitiveRejectionFailsTheTransferWithTheProvidersReasonAndIsNotRetried() {
        Sandbox.faults(Map.of("idempotent", false, "rejectRate", 1.0));
        String id = Api.create(writer("alice"), 1300);
        Await.status(id, "failed", DEADLINE);
        Api.get(writer("alice"), id).then().statusCode(200)
                .body("failureReason", org.hamcrest.Matchers.equalTo("insufficient funds at the sandbox"));

        Sandbox.reset();
        // several sweeps later nothing has touched it again
        Awaitility.await().pollDelay(Duration.ofMillis(1500)).atMost(Duration.ofSeconds(3)).until(() -> true);
        Map<String, Object> row = Db.query("SELECT status, version, attempts FROM transfers WHERE id = ?::uuid", id).get(0);
        assertEquals("failed", row.get("status"));
        assertEquals(2L, row.get("version"));
        assertEquals(1, row.get("attempts"));
        assertEquals(0, Sandbox.executions(reference(id)));
    }

    @Test
    void aTimeoutAfterExecutingIsReconciledByLookupNotBySendingAgain() {
        Sandbox.faults(Map.of("idempotent", false, "timeoutRate", 1.0, "hangMs", 2500));
        String id = Api.create(writer("alice"), 1400);
        Await.status(id, "sent", DEADLINE);

        assertEquals(List.of("pending", "processing", "reconciling", "sent"), history(id));
        assertTrue(reasons(id).contains("lookup: completed"), "settled by the lookup: " + reasons(id));
        exactlyOneExecution(id);
    }

    @Test
    void aFailureBeforeExecutingIsResentWithTheSameReferenceAfterTheLookupFindsNothing() {
        Sandbox.faults(Map.of("idempotent", false, "errorBeforeExecuteRate", 1.0));
        String id = Api.create(writer("alice"), 1500);
        Await.status(id, "reconciling", DEADLINE);
        assertEquals(0, Sandbox.executions(reference(id)));

        Sandbox.faults(Map.of("idempotent", false));
        Await.status(id, "sent", DEADLINE);
        List<String> history = history(id);
        assertEquals(List.of("pending", "processing", "reconciling"), history.subList(0, 3));
        assertEquals(List.of("processing", "sent"), history.subList(history.size() - 2, history.size()));
        assertTrue(reasons(id).contains("lookup: not found, resending"), "resent after the lookup: " + reasons(id));
        exactlyOneExecution(id);
    }

    @Test
    void aProviderOutageOpensTheBreakerAndNoTransferFailsBecauseOfIt() {
        Sandbox.faults(Map.of("idempotent", false, "errorBeforeExecuteRate", 1.0, "lookupErrorRate", 1.0));
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 15; i++) {
            ids.add(Api.create(writer("outage"), 100 + i));
        }
        Awaitility.await("the provider breaker opens").atMost(DEADLINE)
                .until(() -> breakers.currentState(ProviderClient.SEND_BREAKER) == CircuitBreakerState.OPEN);
        assertEquals(0, Db.count("SELECT count(*) FROM transfers WHERE id = ANY(?::uuid[]) AND status IN ('failed', 'sent')",
                (Object) ids.toArray(String[]::new)), "a provider outage never fails a transfer");

        Sandbox.faults(Map.of("idempotent", false));
        Await.allTerminal(ids, Duration.ofSeconds(30));
        for (String id : ids) {
            assertEquals("sent", Await.dbStatus(id));
            exactlyOneExecution(id);
        }
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

    static List<String> history(String id) {
        return Db.query("SELECT to_status FROM transfer_events WHERE transfer_id = ?::uuid ORDER BY version", id)
                .stream().map(r -> (String) r.get("to_status")).toList();
    }

    static List<String> reasons(String id) {
        return Db.query("SELECT reason FROM transfer_events WHERE transfer_id = ?::uuid ORDER BY version", id)
                .stream().map(r -> String.valueOf(r.get("reason"))).toList();
    }

    static String reference(String id) {
        return (String) Db.query("SELECT provider_reference FROM transfers WHERE id = ?::uuid", id).get(0).get("provider_reference");
    }

    static void exactlyOneExecution(String id) {
        assertEquals(1, Sandbox.executions(reference(id)), "exactly one execution at the provider for " + id);
    }
}
