package dev.ledgerline.transfers.faults;

import dev.ledgerline.devstack.sandbox.SandboxFaults;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

import java.time.Duration;

/**
 * The fault suite ({@link FaultSuite}), part one: the provider, Redis, PostgreSQL and an instance fail in turn, then
 * all of them at once.
 */
class FaultsIT extends FaultSuite {

    @BeforeAll
    static void startSuite() throws Exception {
        start("outages");
    }

    @AfterAll
    static void stopSuite() {
        stop();
    }

    @Test
    @Order(1)
    void providerLatencySpikesTimeoutsAndErrorsNeverDuplicateAPayment() throws Exception {
        SandboxFaults flaky = new SandboxFaults(0L, 0.08, 0.08, 0.08, 0.08, 0.1, false, 1500L);
        run("provider-faults", flaky, Duration.ofSeconds(10), f -> {
            f.metricMoves("provider outcome unknown", "ledgerline_provider_send_total", "outcome=\"unknown\"");
            sleep(3000);
            provider.ledger().setFaults(new SandboxFaults(1200L, 0.08, 0.08, 0.08, 0.08, 0.1, false, 1500L));
            sleep(2000);
            provider.ledger().setFaults(flaky);
            sleep(5000); // keep the provider flaky until the load ends
        });
    }

    @Test
    @Order(2)
    void redisPausedLongerThanTheLockTtlNeverDuplicatesAPayment() throws Exception {
        run("redis-paused", HEALTHY, Duration.ofSeconds(10), f -> {
            f.redisErrorsMove();
            sleep(2000);
            stack.redis().pause();
            sleep(4500); // longer than the 3 s lock TTL
            stack.redis().resume();
        });
    }

    @Test
    @Order(3)
    void redisKilledAndRestartedEmptyNeverDuplicatesAPayment() throws Exception {
        run("redis-restarted-empty", HEALTHY, Duration.ofSeconds(10), f -> {
            f.redisErrorsMove();
            sleep(2000);
            stack.redis().kill();
            sleep(1500);
            stack.redis().restart();
        });
    }

    @Test
    @Order(4)
    void postgresRestartedNeverLosesOrDuplicatesATransfer() throws Exception {
        run("postgres-restarted", HEALTHY, Duration.ofSeconds(10), f -> {
            sleep(2000);
            stack.postgres().stop();
            f.someInstanceReportsNotReady("postgres stopped");
            sleep(1000);
            stack.postgres().startAgain();
        });
    }

    @Test
    @Order(5)
    void instanceKilledMidTransferIsFinishedByTheOthers() throws Exception {
        SandboxFaults slow = new SandboxFaults(300L, 0.0, 0.0, 0.0, 0.0, 0.0, false, 1500L);
        run("instance-killed", slow, Duration.ofSeconds(10), f -> {
            sleep(2500);
            f.killMidTransfer(instances.get(1));
            sleep(1000);
            f.restartAsNewActor(instances.get(1));
        });
    }

    @Test
    @Order(6)
    void instancePausedPastItsLeasesIsFencedOff() throws Exception {
        // sends take 700 ms: the paused instance is caught with sends in flight, which finish after its leases ended
        SandboxFaults slow = new SandboxFaults(700L, 0.0, 0.0, 0.0, 0.0, 0.0, false, 1500L);
        run("instance-paused", slow, Duration.ofSeconds(10), f -> {
            sleep(2000);
            ServiceInstance paused = instances.get(0);
            f.staleWritesMoveOn(paused);
            f.pauseMidTransfer(paused);
            sleep(5500); // lease 3 s + a sweep + a lookup
            paused.resume();
        });
    }

    @Test
    @Order(7)
    void allFaultsMixed() throws Exception {
        SandboxFaults flaky = new SandboxFaults(150L, 0.05, 0.05, 0.05, 0.05, 0.05, false, 1500L);
        run("mixed", flaky, Duration.ofSeconds(22), f -> {
            f.redisErrorsMove();
            sleep(1500);
            stack.redis().pause();
            sleep(3500);
            stack.redis().resume();
            provider.ledger().setFaults(new SandboxFaults(700L, 0.05, 0.05, 0.05, 0.05, 0.05, false, 1500L));
            f.pauseMidTransfer(instances.get(2));
            sleep(1000);
            f.killMidTransfer(instances.get(1));
            sleep(4500);
            instances.get(2).resume();
            f.restartAsNewActor(instances.get(1));
            provider.ledger().setFaults(flaky);
            stack.postgres().stop();
            f.someInstanceReportsNotReady("postgres stopped");
            sleep(1000);
            stack.postgres().startAgain();
            stack.redis().kill();
            sleep(1000);
            stack.redis().restart();
        });
    }
}
