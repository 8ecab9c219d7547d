package dev.ledgerline.transfers.pipeline;

import dev.ledgerline.transfers.provider.ProviderClock;
import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Await;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.Management;
import dev.ledgerline.transfers.support.Rows;
import dev.ledgerline.transfers.support.Sandbox;
import dev.ledgerline.transfers.support.TestStack;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static dev.ledgerline.transfers.support.Api.writer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A provider whose clock runs behind PostgreSQL's accepts a send after the deadline the pipeline waits out: with
 * sends held in transit and a provider that executes every send, a lookup after that deadline could say "not found"
 * for a send still about to execute, and the resend would pay twice. The service reads the provider's clock off its
 * answers and claims no new send while the skew exceeds the bound; once the clock is right again the transfers finish,
 * each paid once.
 */
@QuarkusTest
class ClockSkewTest {

    private static final Duration DEADLINE = Duration.ofSeconds(40);

    @Inject
    ClockWatch clocks;

    @Inject
    ProviderClock providerClock;

    @AfterEach
    void healthy() {
        Sandbox.reset();
        TestStack.closeBreakers();
    }

    @Test
    void aProviderClockBehindHoldsSendsAndEveryTransferIsPaidOnceWhenItIsRightAgain() {
        // from clocks known to agree, as a test before this one may have left a hold behind
        Awaitility.await("sends are not held before the skew").atMost(DEADLINE).pollInterval(Duration.ofMillis(50))
                .until(() -> !clocks.holdingSends());
        // first sends travel 2 s, past the 1 s timeout; a provider 3 s behind still executes them
        Sandbox.faults(Map.of("idempotent", false, "clockOffsetMs", -3000, "holdMs", 2000, "holdRate", 1.0));
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            ids.add(Api.create(writer("alice"), 8_100 + i));
        }
        // on a loaded machine a probe's answer can be too slow to sample, and a reading older than three checks holds
        // sends by itself ("last read ... ago"): that hold is right too, but this test waits for the skew's own
        Awaitility.await("the service sees the provider's clock behind and holds sends").atMost(DEADLINE)
                .pollInterval(Duration.ofMillis(100))
                .until(() -> String.valueOf(clocks.holdReason()).contains("provider's clock is"));
        assertTrue(clocks.holdingSends());
        Management.given().get("/q/health/ready").then().statusCode(200);
        assertTrue(Management.given().get("/q/health/ready").asString().contains("sends held"), "readiness says why");

        // while it lasts, nothing more is sent: a transfer created now stays pending, and nothing is paid twice
        String during = Api.create(writer("alice"), 8_200);
        ids.add(during);
        Awaitility.await().during(Duration.ofSeconds(4)).atMost(Duration.ofSeconds(6)).pollInterval(Duration.ofMillis(200))
                .until(() -> "pending".equals(Await.dbStatus(during)));
        for (String id : ids) {
            assertTrue(Sandbox.executions(Rows.reference(id)) <= 1, "paid at most once: " + id);
        }

        // the provider's clock is right again, but a send claimed under the skew may still execute up to 3 s after its
        // deadline and show a lookup lag later: sends stay held that long (plus a send window and the margin) first
        Sandbox.faults(Map.of("idempotent", false));
        Awaitility.await("the provider's clock is read right again").atMost(DEADLINE).pollInterval(Duration.ofMillis(50))
                .until(() -> String.valueOf(clocks.holdReason()).contains("agrees again"));
        long agreedAt = System.nanoTime();
        // then sends resume by themselves, and every transfer is paid exactly once
        Awaitility.await("sends resume").atMost(DEADLINE).pollInterval(Duration.ofMillis(50)).until(() -> !clocks.holdingSends());
        long heldMs = (System.nanoTime() - agreedAt) / 1_000_000;
        assertTrue(heldMs >= 3_000, "sends were held only " + heldMs + " ms after the clocks agreed again");
        Await.allTerminal(ids, DEADLINE);
        for (String id : ids) {
            assertEquals("sent", Await.dbStatus(id), id);
            assertEquals(1, Sandbox.executions(Rows.reference(id)), "exactly one execution for " + id
                    + ": " + Sandbox.orders(Rows.reference(id)));
        }
        assertEquals(0, Db.count("SELECT count(*) FROM transfers WHERE id = ANY(?::uuid[]) AND status = 'failed'",
                (Object) ids.toArray(String[]::new)));
    }

    /**
     * A reading of the provider's clock that no probe has renewed for three checks says nothing about a skew that began
     * since: sends are held on it, as on a skew, and resume by themselves once a probe's answer is read. (The stale
     * reading is written again at every poll, so a probe answering meanwhile cannot hide it.)
     */
    @Test
    void aReadingNoProbeRenewedHoldsSendsUntilTheNextOneAnswers() {
        Awaitility.await("a reading of ten seconds ago holds sends").atMost(DEADLINE).pollInterval(Duration.ofMillis(50))
                .until(() -> {
                    Instant sentAt = Instant.now().minusSeconds(10);
                    // the clocks agreed then: the provider's Date is the midpoint less the half second it centres on
                    providerClock.record(sentAt.minusMillis(495), sentAt.minusMillis(5), Duration.ofMillis(10));
                    return String.valueOf(clocks.holdReason()).contains("last read");
                });
        Awaitility.await("a probe reads the provider's clock again and sends resume").atMost(DEADLINE)
                .pollInterval(Duration.ofMillis(50)).until(() -> !clocks.holdingSends());
        String id = Api.create(writer("alice"), 8_300);
        Await.allTerminal(List.of(id), DEADLINE);
        assertEquals("sent", Await.dbStatus(id));
        assertEquals(1, Sandbox.executions(Rows.reference(id)));
    }
}
