package dev.ledgerline.transfers.faults;

import dev.ledgerline.devstack.LocalPostgres;
import dev.ledgerline.devstack.sandbox.SandboxFaults;
import dev.ledgerline.devstack.sandbox.SandboxLedger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The fault suite ({@link FaultSuite}), part two: effects that outlive their caller (sends still on the wire, commits
 * whose acknowledgment was lost, a provider clock behind ours, a webhook request of a killed instance) and cancels
 * racing claims across instances.
 */
class FaultsInFlightIT extends FaultSuite {

    @BeforeAll
    static void startSuite() throws Exception {
        start("in-flight");
    }

    @AfterAll
    static void stopSuite() {
        stop();
    }


    /**
     * Sends that outlive their caller (docs/safety.md). A share of first sends is held on the wire for 2 s — longer
     * than the 1 s provider timeout, so the worker gives up and fences the transfer to reconciling, and shorter
     * than the lease minus the margin, so a deadline taken from the lease alone would still let the held send
     * execute after the reconciler looked it up and resent it. Some sends are answered 503 and applied later
     * anyway, and lookups lag executions by less than the lag the instances are told to wait out. The provider
     * does not deduplicate: any second execution is a duplicate payment.
     */
    @Test
    @Order(8)
    void sendsStillInTransitWhenTheirCallerGaveUpNeverExecuteTwice() throws Exception {
        SandboxFaults inTransit = HEALTHY.inTransit(2000L, 0.3, 0.05, LOOKUP_LAG.toMillis() / 2);
        run("in-transit", inTransit, Duration.ofSeconds(12), f -> {
            long heldBefore = provider.ledger().stats().heldSends();
            long expiredBefore = provider.ledger().stats().expiredSends();
            f.afterSettle.add(() -> {
                long held = provider.ledger().stats().heldSends() - heldBefore;
                assertTrue(held > 0, "in-transit: no send was held in transit");
                return "held sends +" + held + ", refused past deadline +" + (provider.ledger().stats().expiredSends() - expiredBefore);
            });
            f.metricMoves("provider outcome unknown", "ledgerline_provider_send_total", "outcome=\"unknown\"");
            sleep(12_000); // the faults last as long as the load
        });
    }

    /**
     * PostgreSQL crashes under load: an immediate stop, so the WAL still in its memory is never written and the
     * commits it acknowledged in the last moments are gone when it comes back (synchronous_commit=off, as a
     * failover to an asynchronous replica or a restored backup would lose them). The scenario proves the loss:
     * it counts the transfers a client had been answered 201 for whose rows are gone right after the restart,
     * crashes again (at most three times) while it has seen fewer than two, and fails when none was lost. The
     * WAL writer writes every second meanwhile instead of every 200 ms, as a replica that lags by up to a
     * second would: at the few transfers per second of a machine shared with other builds, 200 ms lost about
     * one commit per crash.
     *
     * <p>Clients retry as they always do; besides, clients that were answered 201 and lost the answer send a sample
     * of the acknowledged keys again with the same body, every other lost one among them, so the checker sees
     * lost intents that were retried (each must finish once, paid at most once) and lost intents that nobody
     * retried (reported in the row, not hidden).
     */
    @Test
    @Order(9)
    void postgresCrashedLosingAcknowledgedCommitsNeverPaysTwice() throws Exception {
        run("postgres-crashed", HEALTHY, Duration.ofSeconds(20), f -> {
            stack.postgres().setReloadable("wal_writer_delay", "1000ms");
            try {
                sleep(2500);
                for (int crash = 1; crash <= 3 && f.lostAcknowledged() < 2; crash++) {
                    if (crash > 1) {
                        for (ServiceInstance instance : instances) {
                            instance.awaitReady(READY);
                        }
                        sleep(1500); // under load again before the next crash
                    }
                    f.crashPostgres();
                }
            } finally {
                stack.postgres().startAgain();
                stack.postgres().setReloadable("wal_writer_delay", null);
            }
            assertTrue(f.lostAcknowledged() > 0, f.prefix + ": " + f.crashes + " crashes lost no commit a client had"
                    + " been answered 201 for: a fault that lost nothing proves nothing");
            f.resendAcknowledged(10);
        });
    }

    /**
     * The provider's clock moves behind ours and back, across the skew bound, under load. While it is
     * 4.5 s behind, every send that arrives is held 4.5 s. The deadline a send carries is its claim plus the 1 s
     * timeout (PostgreSQL's clock); the pipeline waits out that deadline plus the settle time (margin 0.5 s +
     * lookup lag 0.6 s + skew bound 2 s) before it looks a send up and may resend. A provider 4.5 s behind still
     * accepts a send held 4.5 s (its clock reads 0 s after the claim on arrival, before the deadline), so it executes after
     * the lookup the settle time allowed: only the clock watch, which claims no send while the offset exceeds the
     * bound, keeps the resend back. The sandbox does not deduplicate: a second execution is a duplicate payment.
     * Sends must resume by themselves each time the clocks agree again, and every transfer finish.
     *
     * <p>Sends are held only while the clock is behind, so every held send meets a clock that was already off
     * when it arrived. A clock that steps back by more than the bound while a send is in flight is a different
     * fault, one no watch can stop: the step comes after the claim, and the resend it exposes can be claimed
     * before any reading shows it. Run with sends held in both windows, that version paid one transfer twice: its
     * first send arrived before the step, was held 3.5 s and executed under the stepped clock (with a 1 s bound and a 3 s step); the resend had been
     * claimed 2.45 s after that send's deadline by an instance whose watch saw the step 0.6 s after the claim.
     * The skew bound is an assumption about how far the provider's clock may step while a send is in flight, not
     * only about the offset a watch can measure.
     */
    @Test
    @Order(10)
    void providerClockBehindAcrossTheSkewBoundNeverPaysTwice() throws Exception {
        SandboxFaults agreed = HEALTHY.inTransit(0L, 0.0, 0.0, LOOKUP_LAG.toMillis() / 2);
        long behindMs = -4500;
        // every send that arrives while the clock is behind is held: only those claimed before a watch saw the offset
        // arrive then, often just one or two, and at a share of 0.3 some runs held none
        SandboxFaults behind = HEALTHY.inTransit(4500L, 1.0, 0.0, LOOKUP_LAG.toMillis() / 2).withClockOffset(behindMs);
        // the clocks must be read under traffic in both windows: a budget of 1,500 requests, which a quiet machine
        // spends in about 14 s, would end the load before the second window and leave nothing to read the clock off
        run("provider-clock-skew", agreed, Duration.ofSeconds(34), 6 * REQUEST_BUDGET, f -> {
            int ordersFrom = provider.ledger().orders().size();
            long heldBefore = provider.ledger().stats().heldSends();
            ClockSkew skew = new ClockSkew();
            sleep(5000);
            skew.apply(behind, 8000);
            skew.clear(agreed, 6000);
            skew.apply(behind, 8000);
            skew.clear(agreed, 6000);
            assertTrue(skew.heldWindows == 2, "provider-clock-skew: ledgerline_clock_sends_held was 1 in only "
                    + skew.heldWindows + " of the 2 windows the provider's clock was " + -behindMs + " ms behind");
            assertTrue(skew.worstOffsetS <= -CLOCK_SKEW_BOUND.toMillis() / 1000.0, "provider-clock-skew: no instance"
                    + " measured the provider's clock beyond the bound (worst offset " + skew.worstOffsetS + " s)");
            assertTrue(skew.resumedWindows == 2, "provider-clock-skew: sends resumed in only " + skew.resumedWindows
                    + " of the 2 windows the clocks agreed again");
            f.landed.add("sends_held=1 on " + skew.heldOn + " in " + skew.heldWindows + "/2 skew windows, resumed "
                    + skew.resumedWindows + "/2, provider offset down to " + skew.worstOffsetS + " s");
            f.afterSettle.add(() -> {
                for (ServiceInstance instance : instances) {
                    Awaitility.await(instance.id + " claims sends again").atMost(Duration.ofSeconds(15))
                            .pollInterval(Duration.ofMillis(250))
                            .until(() -> instance.gauge("ledgerline_clock_sends_held", "") == 0);
                }
                // claims stop once a watch sees the offset: only sends claimed before it did are held, a few per window
                long heldSends = provider.ledger().stats().heldSends() - heldBefore;
                assertTrue(heldSends > 0, "provider-clock-skew: no send was held while the provider's clock was behind");
                return "held sends +" + heldSends;
            });
            f.executionsWithinClockOffset(ordersFrom, -behindMs);
        });
    }

    /**
     * The in-transit window the database rule guards, opened under load. A share of first sends is held
     * until 200 ms before its deadline and then executed, and a share of sends is answered 503 at once and applied
     * the same 200 ms before the deadline: both execute inside their deadline, after (or as) their caller gave up
     * and fenced the transfer to reconciling, and a lookup lagging 500 ms (less than the 600 ms the instances wait
     * out) answers "not found" for them until after the deadline. Sends are answered 400 ms after they execute, so
     * a held first send's answer misses the 1 s timeout. A lookup or a resend before the deadline plus the settle
     * time would pay twice: the claim's guard on send_not_after and the reconciler's due check keep both back.
     */
    @Test
    @Order(11)
    void sendsExecutingJustBeforeTheirDeadlineAfterTheCallerGaveUpNeverExecuteTwice() throws Exception {
        long beforeDeadlineMs = 200;
        SandboxFaults window = new SandboxFaults(400L, 0.0, 0.0, 0.0, 0.0, 0.0, false, 1500L)
                .inTransit(2000L, 0.3, 0.15, LOOKUP_LAG.toMillis() - 100).executingBeforeDeadline(beforeDeadlineMs);
        run("in-transit-before-deadline", window, Duration.ofSeconds(30), f -> {
            int ordersFrom = provider.ledger().orders().size();
            long heldBefore = provider.ledger().stats().heldSends();
            f.afterSettle.add(() -> {
                long held = provider.ledger().stats().heldSends() - heldBefore;
                List<SandboxLedger.Order> orders = provider.ledger().orders();
                long nearDeadline = 0;
                for (SandboxLedger.Order o : orders.subList(ordersFrom, orders.size())) {
                    if ("executed".equals(o.outcome()) && o.notAfter() != null) {
                        long early = Duration.between(o.appliedAt(), o.notAfter()).toMillis();
                        // an ordinary send executes about the whole timeout before its deadline; a held one, 200 ms
                        if (early >= 0 && early <= beforeDeadlineMs + 200 && early < PROVIDER_TIMEOUT_MS / 2) {
                            nearDeadline++;
                        }
                    }
                }
                assertTrue(held > 0, "in-transit-before-deadline: no first send was held");
                assertTrue(nearDeadline > 0, "in-transit-before-deadline: no send executed just before its deadline");
                return "held sends +" + held + ", executed <=" + (beforeDeadlineMs + 200) + " ms before deadline " + nearDeadline;
            });
            f.executionsWithinClockOffset(ordersFrom, 0);
            f.metricMoves("provider outcome unknown", "ledgerline_provider_send_total", "outcome=\"unknown\"");
            sleep(30_000); // the faults last as long as the load
        });
    }

    /**
     * The owner's cancel against the pipeline's claim, across the three instances: 60 transfers falling due 40 ms
     * apart, each cancelled near its instant through another instance than the one that accepted it, while every
     * instance's sweeper claims them ({@link CancelRace}). Each ends cancelled with no execution or sent with one, never both.
     */
    @Test
    @Order(12)
    void cancelsRacingClaimsAcrossInstancesNeverBothWin() throws Exception {
        provider.ledger().setFaults(HEALTHY);
        for (ServiceInstance instance : instances) {
            instance.awaitReady(READY);
        }
        CancelRace.Result result = new CancelRace(instances, provider.ledger(), stack.postgres().jdbcUrl(), LocalPostgres.USER)
                .run(issuer.writer("cancel-race-user"), 60);
        System.out.println(result.row());
    }

    /**
     * The instance delivering to a webhook endpoint is killed with a request on the wire ({@link WebhookKill}): once
     * its lease expires another instance delivers every event of 20 transfers, signed and in order per transfer,
     * never two requests at the receiver at once. The killed instance comes back as a new actor.
     */
    @Test
    @Order(13)
    void webhookDeliveriesOfAnInstanceKilledMidDeliveryStillHappen() throws Exception {
        provider.ledger().setFaults(HEALTHY);
        for (ServiceInstance instance : instances) {
            instance.awaitReady(READY);
        }
        WebhookKill.Result result = new WebhookKill(instances, stack.postgres().jdbcUrl(), LocalPostgres.USER)
                .run(issuer.token("webhooks-instance-killed-admin", Set.of("webhooks.admin")),
                        issuer.writer("webhooks-instance-killed-user"), 20, Duration.ofSeconds(120),
                        killed -> killed.restartAs(killed.id + "b"));
        System.out.println(result.row());
        for (ServiceInstance instance : instances) {
            instance.awaitReady(READY);
        }
    }
}
