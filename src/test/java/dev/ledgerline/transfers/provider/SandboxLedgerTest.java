package dev.ledgerline.transfers.provider;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The sandbox's in-transit faults: effects that happen after the caller stopped waiting, and their deadline. */
class SandboxLedgerTest {

    private static final ProviderRestClient.PaymentBody BODY = new ProviderRestClient.PaymentBody(1250, "EUR",
            new ProviderRestClient.PaymentBody.Destination("DE89370400440532013000", "Ada Lovelace"));

    private static SandboxFaults nonIdempotent() {
        return new SandboxFaults(0L, 0.0, 0.0, 0.0, 0.0, 0.0, false, 1000L);
    }

    @Test
    void aHeldSendExecutesAfterItsCallerGaveUpWhileItsDeadlineIsOpen() throws Exception {
        SandboxLedger ledger = new SandboxLedger();
        ledger.setFaults(nonIdempotent().inTransit(300, 1.0, 0.0, 0));
        var held = ledger.send("ref-held", BODY, Instant.now().plusSeconds(5).toString()).toCompletableFuture();
        // the caller's own timeout is far shorter than the hold: it stops waiting, the effect still comes
        assertEquals(0, ledger.executions("ref-held"));
        await().atMost(Duration.ofSeconds(5)).until(() -> ledger.executions("ref-held") == 1);
        assertEquals(201, held.get(5, TimeUnit.SECONDS).status());
        assertEquals(1, ledger.stats().heldSends());
        // only the first send of a reference is held: a resend goes through at once, and executes again
        assertEquals(201, ledger.send("ref-held", BODY, Instant.now().plusSeconds(5).toString()).toCompletableFuture()
                .get(1, TimeUnit.SECONDS).status());
        assertEquals(2, ledger.executions("ref-held"));
    }

    @Test
    void aHeldSendAppliedAfterItsDeadlineIsRefusedAndNeverExecutes() throws Exception {
        SandboxLedger ledger = new SandboxLedger();
        ledger.setFaults(nonIdempotent().inTransit(400, 1.0, 0.0, 0));
        var held = ledger.send("ref-late", BODY, Instant.now().plusMillis(100).toString()).toCompletableFuture();
        assertEquals(412, held.get(5, TimeUnit.SECONDS).status());
        assertEquals(0, ledger.executions("ref-late"));
        assertEquals(List.of("expired"), ledger.orders("ref-late").stream().map(SandboxLedger.Order::outcome).toList());
        assertEquals(1, ledger.stats().expiredSends());
    }

    @Test
    void anErrorAnswerCanStillBeFollowedByAnExecution() throws Exception {
        SandboxLedger ledger = new SandboxLedger();
        ledger.setFaults(nonIdempotent().inTransit(200, 0.0, 1.0, 0));
        assertEquals(503, ledger.send("ref-error", BODY, Instant.now().plusSeconds(5).toString()).toCompletableFuture()
                .get(1, TimeUnit.SECONDS).status());
        await().atMost(Duration.ofSeconds(5)).until(() -> ledger.executions("ref-error") == 1);
    }

    @Test
    void aLookupLagsBehindAnExecutionByAtMostTheLag() throws Exception {
        SandboxLedger ledger = new SandboxLedger();
        ledger.setFaults(nonIdempotent().inTransit(0, 0.0, 0.0, 500));
        assertEquals(201, ledger.send("ref-lag", BODY, null).toCompletableFuture().get(1, TimeUnit.SECONDS).status());
        assertEquals(1, ledger.executions("ref-lag"));
        assertEquals(404, ledger.lookup("ref-lag").status(), "an execution younger than the lag is not seen yet");
        await().atMost(Duration.ofSeconds(5)).until(() -> ledger.lookup("ref-lag").status() == 200);
    }

    @Test
    void everyAppliedOrderIsRecordedWithWhatWasPaid() throws Exception {
        SandboxLedger ledger = new SandboxLedger();
        Instant deadline = Instant.now().plusSeconds(5);
        ledger.send("ref-order", BODY, deadline.toString()).toCompletableFuture().get(1, TimeUnit.SECONDS);
        SandboxLedger.Order order = ledger.orders("ref-order").get(0);
        assertEquals(1250, order.amount());
        assertEquals("EUR", order.currency());
        assertEquals("DE89370400440532013000", order.iban());
        assertEquals("Ada Lovelace", order.name());
        assertEquals(deadline, order.notAfter());
        assertEquals("executed", order.outcome());
        assertTrue(!order.appliedAt().isAfter(deadline));
    }
}
