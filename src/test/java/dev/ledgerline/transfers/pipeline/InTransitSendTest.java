package dev.ledgerline.transfers.pipeline;

import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Await;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.Sandbox;
import dev.ledgerline.transfers.support.TestStack;
import dev.ledgerline.transfers.provider.PaymentOrder;
import dev.ledgerline.transfers.provider.PaymentProvider;
import dev.ledgerline.transfers.provider.SendNotWrittenException;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.awaitility.Awaitility;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static dev.ledgerline.transfers.support.Api.as;
import static dev.ledgerline.transfers.support.Api.writer;
import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A send that outlives its caller: the first request of a transfer is held in transit longer than the
 * provider timeout (test profile: 1 s) and reaches a non-idempotent provider later. The reconciler must
 * not look the payment up and resend while that request could still execute; the held request itself
 * must not execute once its deadline has passed. Either way the money moves once.
 */
@QuarkusTest
class InTransitSendTest {

    @Inject
    PaymentProvider provider;

    private static final Duration DEADLINE = Duration.ofSeconds(20);

    @AfterEach
    void healthyProvider() {
        Sandbox.reset();
        TestStack.closeBreakers();
    }

    @Test
    void sendsHeldInTransitPastTheirTimeoutAreNeverExecutedTwice() throws InterruptedException {
        // held 2 s: past the 1 s timeout and, depending on the sweeper's phase, past the reconciler's first
        // lookup — but inside a deadline taken from the lease alone (claim + 3 s lease - 0.5 s margin)
        Sandbox.faults(Map.of("idempotent", false, "holdMs", 2000, "holdRate", 1.0));
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            ids.add(Api.create(writer("alice"), 4100 + i));
            Thread.sleep(170); // spread the transfers over the sweeper's one-second tick
        }
        Await.allTerminal(ids, DEADLINE);

        for (String id : ids) {
            String reference = reference(id);
            // the held first send reaches the provider two seconds after it left: wait until it was applied
            Awaitility.await("the held send of " + id + " reaches the provider").atMost(Duration.ofSeconds(10))
                    .until(() -> orders(reference).stream().anyMatch(o -> "expired".equals(o.get("outcome")))
                            || Sandbox.executions(reference) > 1);
            assertEquals(1, Sandbox.executions(reference), "exactly one execution per reference, transfer " + id);
            assertEquals("sent", Await.dbStatus(id));
            List<String> path = as(writer("alice")).get("/v1/transfers/" + id + "/events").then().statusCode(200)
                    .extract().jsonPath().getList("events.toStatus");
            // the held send timed out, the lookup found nothing once its deadline had passed, a resend executed
            assertEquals("reconciling", path.get(2), "transfer " + id + " went " + path);
            assertEquals("sent", path.get(path.size() - 1), "transfer " + id + " went " + path);
        }
    }

    @Test
    void aSendWhoseDeadlinePassedBeforeItWasWrittenNeverLeavesTheProcess() {
        String reference = "ll_deadline_" + UUID.randomUUID().toString().replace("-", "");
        PaymentOrder late = new PaymentOrder(reference, 1250, "EUR", "DE89370400440532013000", "Ada Lovelace",
                Instant.now().minusMillis(1));
        Throwable failure = provider.send(late).onItem().transform(r -> (Throwable) null)
                .onFailure().recoverWithItem(e -> e).await().atMost(Duration.ofSeconds(5));
        assertTrue(causedBy(failure, SendNotWrittenException.class), "failed with " + failure);
        assertEquals(List.of(), orders(reference), "the provider never saw the send");
        assertEquals(0, Sandbox.executions(reference));
    }

    private static boolean causedBy(Throwable failure, Class<? extends Throwable> type) {
        for (Throwable e = failure; e != null; e = e.getCause()) {
            if (type.isInstance(e)) {
                return true;
            }
        }
        return false;
    }

    static List<Map<String, Object>> orders(String reference) {
        return given().queryParam("reference", reference).get("/sandbox/provider/orders")
                .then().statusCode(200).extract().jsonPath().getList("$");
    }

    static String reference(String id) {
        return (String) Db.query("SELECT provider_reference FROM transfers WHERE id = ?::uuid", id).get(0).get("provider_reference");
    }
}
