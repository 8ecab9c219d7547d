package dev.ledgerline.transfers.pipeline;

import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Await;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.Metrics;
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
        assertEquals(0, Sandbox.executions(InTransitSendTest.reference(id)));
    }

    @Test
    void aProviderRefusingEverySendParksTheTransferForAnOperatorInsteadOfLooping() {
        double parkedBefore = Math.max(0, Metrics.sum("ledgerline_reconciliations_total", "result=\"parked\""));
        Sandbox.faults(Map.of("idempotent", false, "refuseWith", 409));
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
        assertEquals(0, Sandbox.executions(InTransitSendTest.reference(id)));

        // the operator fixes the provider side and resumes it the way README says; it then completes by itself
        Sandbox.faults(Map.of("idempotent", false));
        assertEquals(1, Db.update("UPDATE transfers SET next_attempt_at = now(), refused_sends = 0"
                + " WHERE id = ?::uuid AND status = 'reconciling' AND next_attempt_at = 'infinity'", id));
        Await.status(id, "sent", Duration.ofSeconds(20));
        assertEquals(1, Sandbox.executions(InTransitSendTest.reference(id)));
    }
}
