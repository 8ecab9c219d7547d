package dev.ledgerline.transfers.pipeline;

import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Await;
import dev.ledgerline.transfers.support.Rows;
import dev.ledgerline.transfers.support.Sandbox;
import dev.ledgerline.transfers.support.TestStack;
import dev.ledgerline.transfers.provider.PaymentOrder;
import dev.ledgerline.transfers.provider.PaymentProvider;
import dev.ledgerline.transfers.provider.SendNotWrittenException;
import dev.ledgerline.transfers.transfer.TransferRepository;
import dev.ledgerline.transfers.transfer.Claim;
import dev.ledgerline.transfers.transfer.Reconcilable;
import dev.ledgerline.transfers.transfer.Seen;
import dev.ledgerline.transfers.transfer.TransferStatus;
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
import java.util.Optional;
import java.util.UUID;

import static dev.ledgerline.transfers.support.Api.as;
import static dev.ledgerline.transfers.support.Api.writer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A send that outlives its caller: the first request of a transfer is held in transit longer than the
 * provider timeout (test profile: 1 s) and reaches a non-idempotent provider later. The reconciler must
 * not look the payment up and resend while that request could still execute; the held request itself
 * must not execute once its deadline has passed. Either way the money moves once.
 *
 * <p>The sends held here arrive after their deadline, so the provider's own deadline check refuses them, and
 * the reconciler's take and the claim both wait for the deadline plus the settle time, so either rule alone
 * keeps the other's removal from showing. The last two tests therefore put each rule on its own against a row
 * whose last send could still execute.
 */
@QuarkusTest
class InTransitSendTest {

    @Inject
    PaymentProvider provider;

    @Inject
    TransferRepository repository;

    private static final Duration DEADLINE = Duration.ofSeconds(20);

    /** The lease of the tests' own claims: long enough that no lease expiry moves their rows meanwhile. */
    private static final Duration HAND_LEASE = Duration.ofSeconds(30);

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
            String reference = Rows.reference(id);
            // the held first send reaches the provider two seconds after it left: wait until it was applied
            Awaitility.await("the held send of " + id + " reaches the provider").atMost(Duration.ofSeconds(10))
                    .until(() -> Sandbox.orders(reference).stream().anyMatch(o -> "expired".equals(o.get("outcome")))
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
        assertEquals(List.of(), Sandbox.orders(reference), "the provider never saw the send");
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

    /**
     * The claim refuses a row whose last send could still execute or surface, until that send's deadline plus the
     * settle time (clock margin, lookup lag, clock-skew bound) has passed on PostgreSQL's clock. Such a row reaches
     * the claim when an operator resumes it or a dispatch from before its last send arrives late; the row here has
     * no schedule ({@code 'infinity'}), so only the claims of this test touch it. They are repeated until one is
     * taken, and that claim's moment (the start of its lease) must not be earlier than the deadline plus the
     * settle time.
     */
    @Test
    void theClaimRefusesARowWhoseLastSendCouldStillExecute() throws InterruptedException {
        String id = HandMadeRows.insert("reconciling", 4300, "now() + interval '2 seconds'", "'infinity'");
        Instant settled = HandMadeRows.sendNotAfter(id).plusMillis(repository.settleMs());
        Seen seen = new Seen(UUID.fromString(id), TransferStatus.RECONCILING, 0);

        Claim claim = null;
        long giveUp = System.nanoTime() + DEADLINE.toNanos();
        while (claim == null && System.nanoTime() < giveUp) {
            claim = repository.claim(seen, "in-transit-test", HAND_LEASE, "test: claim by hand").await().atMost(HandMadeRows.WAIT);
            if (claim == null) {
                Thread.sleep(20);
            }
        }
        assertNotNull(claim, "the row is claimed once its last send's deadline plus the settle time has passed");
        Instant claimedAt = HandMadeRows.claimedAt(claim, HAND_LEASE);
        HandMadeRows.finish(repository, claim.id(), claim.version(), claim.token());
        assertFalse(claimedAt.isBefore(settled), "claimed at " + claimedAt + " while the last send could still execute "
                + "or surface (until " + settled + ")");
    }

    /**
     * The reconciler takes a row for a lookup only once its last send can no longer execute: a lookup earlier could
     * answer "not found" for a payment about to happen. The row is due by its schedule ({@code next_attempt_at =
     * now()}, as an operator's resume leaves it) while its last send's deadline is two seconds away. The take is
     * repeated here, and the sweeper takes too; whenever this test's take returns the row, PostgreSQL's clock right
     * after it must be past the deadline plus the settle time.
     */
    @Test
    void theReconcilerDoesNotTakeARowWhoseLastSendCouldStillExecute() throws InterruptedException {
        String id = HandMadeRows.insert("reconciling", 4301, "now() + interval '2 seconds'", "now()");
        Instant settled = HandMadeRows.sendNotAfter(id).plusMillis(repository.settleMs());

        long giveUp = System.nanoTime() + DEADLINE.toNanos();
        boolean taken = false;
        while (!taken && System.nanoTime() < giveUp) {
            Optional<Reconcilable> mine = repository.takeReconciling(1000, Duration.ofMillis(200), Duration.ofSeconds(1))
                    .await().atMost(HandMadeRows.WAIT)
                    .stream().filter(r -> r.id().toString().equals(id)).findFirst();
            if (mine.isPresent()) {
                Instant noLaterThan = HandMadeRows.databaseClock();
                HandMadeRows.finish(repository, mine.get().id(), mine.get().version(), mine.get().token());
                assertFalse(noLaterThan.isBefore(settled), "taken for a lookup by " + noLaterThan
                        + " while the last send could still execute or surface (until " + settled + ")");
                taken = true;
            } else {
                // the sweeper may take it first once it is due: its lookup finds nothing and sends it (processing)
                taken = !"reconciling".equals(Await.dbStatus(id));
                Thread.sleep(20);
            }
        }
        assertTrue(taken, "the row is taken for a lookup once its last send's deadline plus the settle time has passed");
    }
}
