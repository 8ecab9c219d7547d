package dev.ledgerline.devstack.sandbox;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The sandbox's in-transit faults: effects that happen after the caller stopped waiting, and their deadline, judged
 * by the sandbox's own clock.
 */
class SandboxLedgerTest {

    private static final Wire.PaymentOrder BODY = new Wire.PaymentOrder(1250, "EUR",
            new Wire.PaymentOrder.Destination("DE89370400440532013000", "Ada Lovelace"));

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

    /** The dangerous direction: a provider clock behind ours still executes a send after the deadline we set. */
    @Test
    void aSandboxClockBehindExecutesASendOurClockCallsLate() throws Exception {
        SandboxLedger ledger = new SandboxLedger();
        Instant passed = Instant.now().minusSeconds(1);
        assertEquals(412, ledger.send("ref-true-clock", BODY, passed.toString()).toCompletableFuture().get(1, TimeUnit.SECONDS).status());

        ledger.setFaults(nonIdempotent().withClockOffset(-3000));
        assertEquals(201, ledger.send("ref-clock-behind", BODY, passed.toString()).toCompletableFuture().get(1, TimeUnit.SECONDS).status(),
                "by the sandbox's clock, 3 s behind, the deadline one second ago is still two seconds away");
        SandboxLedger.Order order = ledger.orders("ref-clock-behind").get(0);
        assertEquals("executed", order.outcome());
        assertTrue(order.appliedAt().isAfter(order.notAfter()), "the order records the real instant it was applied");

        // ahead only refuses early: a deadline one second away has passed by a clock three seconds ahead
        ledger.setFaults(nonIdempotent().withClockOffset(3000));
        assertEquals(412, ledger.send("ref-clock-ahead", BODY, Instant.now().plusSeconds(1).toString()).toCompletableFuture()
                .get(1, TimeUnit.SECONDS).status());
        assertEquals(0, ledger.executions("ref-clock-ahead"));
    }

    @Test
    void theSandboxDatesItsAnswersByItsOwnClock() {
        SandboxLedger ledger = new SandboxLedger();
        ledger.setFaults(nonIdempotent().withClockOffset(-3000));
        long behind = Duration.between(Instant.now(), ledger.now()).toMillis();
        assertTrue(behind <= -2950 && behind >= -3050, "the sandbox's clock is " + behind + " ms off, not -3000");
        Instant date = java.time.ZonedDateTime.parse(ledger.httpDate(), java.time.format.DateTimeFormatter.RFC_1123_DATE_TIME)
                .toInstant();
        long dateBehind = Duration.between(Instant.now(), date).toMillis();
        assertTrue(dateBehind <= -2950 && dateBehind >= -4050, "the Date header is " + dateBehind + " ms off, not -3000 (whole seconds)");
    }

    /**
     * The window the service's database rule guards: a send that executes after its caller gave up, but inside its
     * deadline, while a lookup lagging behind does not see it yet.
     */
    @Test
    void aHeldSendExecutesJustBeforeItsDeadlineWhileALaggingLookupDoesNotSeeIt() throws Exception {
        SandboxLedger ledger = new SandboxLedger();
        ledger.setFaults(nonIdempotent().inTransit(0, 1.0, 0.0, 1000).executingBeforeDeadline(400));
        Instant deadline = Instant.now().plusMillis(1500);
        var held = ledger.send("ref-window", BODY, deadline.toString()).toCompletableFuture();
        SandboxLedger erring = new SandboxLedger();
        erring.setFaults(nonIdempotent().inTransit(0, 0.0, 1.0, 0).executingBeforeDeadline(400));
        assertEquals(503, erring.send("ref-error-window", BODY, deadline.toString()).toCompletableFuture().get(1, TimeUnit.SECONDS).status());

        await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(10)).until(() -> ledger.executions("ref-window") == 1);
        assertEquals(404, ledger.lookup("ref-window").status(), "a lookup lagging 1 s does not see the execution yet");
        SandboxLedger.Order order = ledger.orders("ref-window").get(0);
        assertEquals("executed", order.outcome());
        assertTrue(!order.appliedAt().isAfter(deadline), "applied inside its deadline: " + order.appliedAt() + " > " + deadline);
        assertTrue(!order.appliedAt().isBefore(deadline.minusMillis(420)),
                "applied " + Duration.between(order.appliedAt(), deadline).toMillis() + " ms before its deadline, not 400");
        assertEquals(201, held.get(5, TimeUnit.SECONDS).status());
        assertEquals(1, ledger.stats().heldSends());

        await().atMost(Duration.ofSeconds(5)).until(() -> erring.executions("ref-error-window") == 1);
        SandboxLedger.Order late = erring.orders("ref-error-window").get(0);
        assertTrue(!late.appliedAt().isAfter(deadline) && !late.appliedAt().isBefore(deadline.minusMillis(420)),
                "a send answered 503 is applied just before its deadline as well: " + late);
    }

    /** What a provider clock behind does to a held send: applied before the deadline by its clock, after it by ours. */
    @Test
    void aHeldSendAtASandboxClockBehindExecutesAfterTheRealDeadline() throws Exception {
        SandboxLedger ledger = new SandboxLedger();
        ledger.setFaults(nonIdempotent().inTransit(0, 1.0, 0.0, 0).executingBeforeDeadline(300).withClockOffset(-2000));
        Instant deadline = Instant.now().plusMillis(500);
        assertEquals(201, ledger.send("ref-behind-held", BODY, deadline.toString()).toCompletableFuture()
                .get(5, TimeUnit.SECONDS).status());
        SandboxLedger.Order order = ledger.orders("ref-behind-held").get(0);
        assertEquals("executed", order.outcome());
        long late = Duration.between(deadline, order.appliedAt()).toMillis();
        assertTrue(late >= 1600, "executed " + late + " ms after the real deadline, not about 1700");
    }
}
