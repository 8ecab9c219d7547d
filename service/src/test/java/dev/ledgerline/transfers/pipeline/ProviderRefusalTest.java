package dev.ledgerline.transfers.pipeline;

import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Await;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.Metrics;
import dev.ledgerline.transfers.support.Rows;
import dev.ledgerline.transfers.support.Sandbox;
import dev.ledgerline.transfers.support.TestStack;
import io.quarkus.test.junit.QuarkusTest;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static dev.ledgerline.transfers.support.Api.as;
import static dev.ledgerline.transfers.support.Api.writer;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a provider's 4xx means. A 400 is a definitive refusal: the transfer fails with nothing executed. Any
 * other unexplained 4xx is an unknown outcome; the reconciler resends after a lookup, but only
 * {@code ledgerline.pipeline.max-refused-sends} times (2 in the test profile): then it parks the transfer in
 * {@code reconciling} with a reason an operator can read, instead of looping lookup → resend for ever.
 */
@QuarkusTest
class ProviderRefusalTest {

    @AfterEach
    void healthyProvider() {
        Sandbox.reset();
        TestStack.closeBreakers();
    }

    @Test
    void aBadRequestFromTheProviderFailsTheTransferWithoutAnyExecution() {
        Sandbox.faults(Map.of("idempotent", false, "refuseWith", 400));
        String id = Api.create(writer("alice"), 5100);
        Await.status(id, "failed", Duration.ofSeconds(20));
        Api.get(writer("alice"), id).then().statusCode(200).body("failureReason", equalTo("refused by the provider (400)"));
        assertEquals(0, Sandbox.executions(Rows.reference(id)));
    }

    @Test
    void aProviderRefusingEverySendParksTheTransferForAnOperatorInsteadOfLooping() {
        double parkedBefore = Math.max(0, Metrics.sum("ledgerline_reconciliations_total", "result=\"parked\""));
        Sandbox.faults(Map.of("idempotent", false, "refuseWith", 403));
        String id = Api.create(writer("alice"), 5200);

        Awaitility.await("the transfer is parked").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                .until(() -> Db.count("SELECT count(*) FROM transfers WHERE id = ?::uuid AND status = 'reconciling'"
                        + " AND next_attempt_at = 'infinity'", id) == 1);
        List<String> reasons = as(writer("alice")).get("/v1/transfers/" + id + "/events").then().statusCode(200)
                .extract().jsonPath().getList("events.reason");
        String last = reasons.get(reasons.size() - 1);
        assertEquals("parked after 2 refused sends, needs an operator", last);
        assertEquals(2, Db.count("SELECT count(*) FROM transfer_events WHERE transfer_id = ?::uuid AND to_status = 'processing'", id),
                "exactly max-refused-sends sends, then no more");
        assertEquals(parkedBefore + 1, Metrics.sum("ledgerline_reconciliations_total", "result=\"parked\""));
        assertEquals(0, Sandbox.executions(Rows.reference(id)));

        // the operator fixes the provider side and resumes it the way docs/operating.md "A parked transfer" says; it then completes by itself
        Sandbox.faults(Map.of("idempotent", false));
        long resumed = (Long) Db.query("SELECT ledgerline_resume_parked(?::uuid, 'on-call', 'provider side fixed') AS version", id)
                .get(0).get("version");
        Await.status(id, "sent", Duration.ofSeconds(20));
        assertEquals(1, Sandbox.executions(Rows.reference(id)));
        assertEquals(1, Db.count("SELECT count(*) FROM transfer_events WHERE transfer_id = ?::uuid AND version = ?"
                + " AND actor = 'on-call' AND to_status = 'reconciling'", id, resumed), "the resume is in the history, by its operator");
    }

    @Test
    void aProviderAnswering409ToEverySendIsNeverARefusalAndIsParkedAfterMaxSendsSaying() {
        // 409: the provider says a request with this key is in progress — maybe executing; never "nothing moved"
        Sandbox.faults(Map.of("idempotent", false, "refuseWith", 409));
        String id = Api.create(writer("alice"), 5300);
        Awaitility.await("the transfer is parked").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
                .until(() -> Db.count("SELECT count(*) FROM transfers WHERE id = ?::uuid AND status = 'reconciling'"
                        + " AND next_attempt_at = 'infinity'", id) == 1);
        List<String> reasons = as(writer("alice")).get("/v1/transfers/" + id + "/events").then().statusCode(200)
                .extract().jsonPath().getList("events.reason");
        String last = reasons.get(reasons.size() - 1);
        assertEquals("parked after 5 sends with no outcome (last: provider outcome unknown), needs an operator", last);
        assertEquals(5, Db.count("SELECT count(*) FROM transfer_events WHERE transfer_id = ?::uuid AND to_status = 'processing'", id),
                "exactly max-sends sends, then no more");
        assertEquals(0, ((Number) Db.query("SELECT refused_sends FROM transfers WHERE id = ?::uuid", id).get(0).get("refused_sends")).intValue(),
                "a 409 never counts as a refusal");
        assertEquals(0, Sandbox.executions(Rows.reference(id)));
    }

    @Test
    void aRejectionAnsweringAResendNeverFailsATransferWhoseMoneyMayHaveMoved() {
        // the first send executes and its answer never arrives; the provider's lookup lags far beyond what it states,
        // so the reconciler hears "not found" and resends — and the provider answers the reused key with a 400
        Sandbox.faults(Map.of("idempotent", true, "timeoutRate", 1.0, "hangMs", 3000, "lookupLagMs", 120_000));
        String id = Api.create(writer("alice"), 5400);
        String reference = Rows.reference(id);
        // (its lookups lag, so the sandbox's lookup cannot say so: its orders do)
        Awaitility.await("the first send executed").atMost(Duration.ofSeconds(20)).until(() -> executedOrders(reference) == 1);
        Sandbox.faults(Map.of("idempotent", true, "refuseWith", 400, "lookupLagMs", 120_000));

        Awaitility.await("the transfer is parked").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
                .until(() -> Db.count("SELECT count(*) FROM transfers WHERE id = ?::uuid AND status = 'reconciling'"
                        + " AND next_attempt_at = 'infinity'", id) == 1);
        List<String> history = Rows.history(id);
        assertTrue(!history.contains("failed"), "a 400 to a resend never fails a transfer that may have been paid: " + history);
        assertTrue(Rows.reasons(id).contains("provider answered 400 to a resend, outcome unknown"), Rows.reasons(id).toString());
        assertEquals(1, executedOrders(reference));
    }

    private static long executedOrders(String reference) {
        return Sandbox.orders(reference).stream().filter(o -> "executed".equals(o.get("outcome"))).count();
    }
}
