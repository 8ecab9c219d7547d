package dev.ledgerline.transfers.faults;

import dev.ledgerline.transfers.local.LocalPostgres;
import dev.ledgerline.transfers.local.LocalStack;
import dev.ledgerline.transfers.provider.SandboxFaults;
import io.smallrye.jwt.build.Jwt;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Exactly-once under real faults, across three instances (issue 6, Jepsen's method on one machine).
 *
 * <p>Three JVMs of the packaged prod jar share one PostgreSQL and one Redis that this suite owns, and call
 * a sandbox provider served from this JVM in {@code idempotent:false} mode, so a duplicate send is a
 * second execution. Mobile-like clients drive load while one fault — then all of them — is injected; after
 * the faults heal and a bounded settle time, {@link Checker} compares the recorded history with the
 * database and the provider. Each scenario prints a table row; a violation fails it.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class FaultsIT {

    static final Duration IN_FLIGHT_TTL = Duration.ofSeconds(3);
    static final Duration SETTLE = Duration.ofSeconds(45);
    static final Duration READY = Duration.ofSeconds(90);
    static final SandboxFaults HEALTHY = new SandboxFaults(0L, 0.0, 0.0, 0.0, 0.0, 0.0, false, 1500L);

    private static LocalStack stack;
    private static ProviderServer provider;
    private static final List<ServiceInstance> instances = new ArrayList<>();
    private static KeyPair issuer;
    private static Path publicKey;
    private static Checker checker;
    private static Thread cleanupOnExit;
    private static final List<Checker.Report> reports = new ArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        cleanupOnExit = new Thread(FaultsIT::cleanUp, "faults-it-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanupOnExit);
        assertTrue(Files.exists(ServiceInstance.JAR), "build the jar first: ./mvnw package");
        stack = LocalStack.start();
        provider = ProviderServer.start();
        provider.ledger().setFaults(HEALTHY);
        checker = new Checker(stack.postgres().jdbcUrl(), LocalPostgres.USER);

        publicKey = Files.createTempFile("faults-issuer", ".pem");
        issuer = ServiceInstance.issuer(publicKey);

        Path logs = Files.createDirectories(Path.of("target/faults"));
        Map<String, String> env = ServiceInstance.suiteEnv(stack, provider.url(), publicKey);
        env.put("LEDGERLINE_IDEMPOTENCY_IN_FLIGHT_TTL", "PT" + IN_FLIGHT_TTL.toSeconds() + "S");
        env.put("LEDGERLINE_TRANSFERS_DATABASE_TIMEOUT", "PT2S");
        // quoted keys have no unambiguous environment-variable form: system properties instead
        List<String> props = List.of(
                "-Dquarkus.fault-tolerance.\"dev.ledgerline.transfers.provider.ProviderClient/send\".circuit-breaker.delay=1000",
                "-Dquarkus.fault-tolerance.\"dev.ledgerline.transfers.provider.ProviderClient/lookup\".circuit-breaker.delay=1000");
        for (int i = 1; i <= 3; i++) {
            Path log = logs.resolve("instance-" + i + ".log");
            Files.deleteIfExists(log);
            instances.add(new ServiceInstance("faults-" + i, ServiceInstance.freePort(), log, env, props));
        }
        // the first one migrates the schema alone; the other two then start side by side
        instances.get(0).start();
        instances.get(0).awaitReady(READY);
        instances.get(1).start();
        instances.get(2).start();
        instances.get(1).awaitReady(READY);
        instances.get(2).awaitReady(READY);
        warmUp();
    }

    /** A short, fault-free load first: the first scenario should not measure class loading and a cold JIT. */
    private static void warmUp() throws Exception {
        String principal = "warmup-user";
        String token = Jwt.issuer("https://ledgerline.dev/issuer").audience("ledgerline-transfers")
                .subject(principal).groups(Set.of("transfers.write", "transfers.read")).expiresIn(3600).sign(issuer.getPrivate());
        LoadDriver driver = new LoadDriver(instances, Map.of(principal, token), 150);
        LoadDriver.awaitEnd(driver.start(3, Duration.ofSeconds(4)), Duration.ofSeconds(30));
        checker.awaitTerminal("warmup-", SETTLE);
    }

    @AfterAll
    static void stop() {
        System.out.println();
        System.out.println("Fault suite summary");
        System.out.println(Checker.Report.header());
        reports.forEach(r -> System.out.println(r.row()));
        cleanUp();
        try {
            Runtime.getRuntime().removeShutdownHook(cleanupOnExit);
        } catch (IllegalStateException shuttingDown) {
            // the hook is running already
        }
    }

    private static synchronized void cleanUp() {
        instances.forEach(ServiceInstance::close);
        if (provider != null) {
            try {
                provider.close();
            } catch (Exception ignored) {
                // the JVM is going away
            }
            provider = null;
        }
        if (stack != null) {
            stack.close();
            stack = null;
        }
        try {
            if (publicKey != null) {
                Files.deleteIfExists(publicKey);
            }
        } catch (IOException ignored) {
            // a temp file
        }
    }

    @Test
    @Order(1)
    void providerLatencySpikesTimeoutsAndErrorsNeverDuplicateAPayment() throws Exception {
        SandboxFaults flaky = new SandboxFaults(0L, 0.08, 0.08, 0.08, 0.08, 0.1, false, 1500L);
        run("provider-faults", flaky, Duration.ofSeconds(10), false, () -> {
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
        run("redis-paused", HEALTHY, Duration.ofSeconds(10), false, () -> {
            sleep(2000);
            stack.redis().pause();
            sleep(4500); // longer than the 3 s lock TTL
            stack.redis().resume();
        });
    }

    @Test
    @Order(3)
    void redisKilledAndRestartedEmptyNeverDuplicatesAPayment() throws Exception {
        run("redis-restarted-empty", HEALTHY, Duration.ofSeconds(10), false, () -> {
            sleep(2000);
            stack.redis().kill();
            sleep(1500);
            stack.redis().restart();
        });
    }

    @Test
    @Order(4)
    void postgresRestartedNeverLosesOrDuplicatesATransfer() throws Exception {
        run("postgres-restarted", HEALTHY, Duration.ofSeconds(10), false, () -> {
            sleep(2000);
            stack.postgres().stop();
            sleep(1000);
            stack.postgres().startAgain();
        });
    }

    @Test
    @Order(5)
    void instanceKilledMidTransferIsFinishedByTheOthers() throws Exception {
        SandboxFaults slow = new SandboxFaults(300L, 0.0, 0.0, 0.0, 0.0, 0.0, false, 1500L);
        run("instance-killed", slow, Duration.ofSeconds(10), false, () -> {
            sleep(2500);
            awaitLeaseHeldBy("instance-killed-", instances.get(1));
            instances.get(1).kill();
            sleep(1000);
            instances.get(1).start();
        });
    }

    @Test
    @Order(6)
    void instancePausedPastItsLeasesIsFencedOff() throws Exception {
        // sends take 700 ms: the paused instance is caught with sends in flight, which finish after its leases ended
        SandboxFaults slow = new SandboxFaults(700L, 0.0, 0.0, 0.0, 0.0, 0.0, false, 1500L);
        run("instance-paused", slow, Duration.ofSeconds(10), true, () -> {
            sleep(2000);
            awaitLeaseHeldBy("instance-paused-", instances.get(0));
            instances.get(0).pause();
            sleep(5500); // lease 3 s + a sweep + a lookup
            instances.get(0).resume();
        });
    }

    @Test
    @Order(7)
    void allFaultsMixed() throws Exception {
        SandboxFaults flaky = new SandboxFaults(150L, 0.05, 0.05, 0.05, 0.05, 0.05, false, 1500L);
        run("mixed", flaky, Duration.ofSeconds(22), true, () -> {
            sleep(1500);
            stack.redis().pause();
            sleep(3500);
            stack.redis().resume();
            provider.ledger().setFaults(new SandboxFaults(700L, 0.05, 0.05, 0.05, 0.05, 0.05, false, 1500L));
            awaitLeaseHeldBy("mixed-", instances.get(2));
            instances.get(2).pause();
            sleep(1000);
            instances.get(1).kill();
            sleep(4500);
            instances.get(2).resume();
            instances.get(1).start();
            provider.ledger().setFaults(flaky);
            stack.postgres().stop();
            sleep(1000);
            stack.postgres().startAgain();
            stack.redis().kill();
            sleep(1000);
            stack.redis().restart();
        });
    }

    private interface Plan {
        void run() throws Exception;
    }

    private void run(String scenario, SandboxFaults faults, Duration load, boolean expectFenced, Plan plan) throws Exception {
        long started = System.nanoTime();
        String prefix = scenario + "-";
        Map<String, String> tokens = new LinkedHashMap<>();
        for (int i = 0; i < 3; i++) {
            String principal = prefix + "user-" + i;
            tokens.put(principal, Jwt.issuer("https://ledgerline.dev/issuer").audience("ledgerline-transfers")
                    .subject(principal).groups(Set.of("transfers.write", "transfers.read")).expiresIn(3600)
                    .sign(issuer.getPrivate()));
        }
        long fencedBefore = fencedMetrics();
        long fencedLogsBefore = fencedLogs();
        provider.ledger().setFaults(faults);
        long duplicatesBefore = provider.ledger().stats().duplicateExecutions();

        LoadDriver driver = new LoadDriver(instances, tokens, 1500);
        var clients = driver.start(6, load);
        try {
            plan.run();
        } finally {
            heal();
        }
        LoadDriver.awaitEnd(clients, Duration.ofSeconds(30));
        for (ServiceInstance instance : instances) {
            instance.awaitReady(READY);
        }
        checker.awaitTerminal(prefix, SETTLE);

        Checker.Report report = checker.check(scenario, prefix, driver.history(), provider.ledger(),
                fencedMetrics() - fencedBefore, fencedLogs() - fencedLogsBefore, IN_FLIGHT_TTL);
        reports.add(report);
        System.out.println();
        System.out.println(Checker.Report.header());
        System.out.println(report.row());
        System.out.printf("(%s took %.1f s)%n", scenario, (System.nanoTime() - started) / 1e9);
        report.violations().stream().limit(25).forEach(v -> System.out.println("  VIOLATION " + v));

        assertEquals(List.of(), report.violations(), scenario + ": the history contradicts the guarantees");
        assertTrue(report.transfers() > 0, scenario + ": the load created no transfers");
        assertEquals(0, provider.ledger().stats().duplicateExecutions() - duplicatesBefore,
                scenario + ": the provider saw duplicate executions");
        if (expectFenced) {
            assertTrue(report.fencedLogs() > 0 || report.fencedMetrics() > 0,
                    scenario + ": the paused instance's writes should have been fenced off at least once");
        }
    }

    /** Undoes every fault; each step on its own, so one failing step does not leave the others broken. */
    private static void heal() {
        for (ServiceInstance instance : instances) {
            quietly(() -> {
                if (!instance.isAlive()) {
                    instance.start();
                }
            });
            quietly(instance::resume);
        }
        quietly(() -> stack.redis().resume());
        quietly(() -> {
            if (!stack.redis().isRunning()) {
                stack.redis().restart();
            }
        });
        quietly(() -> stack.postgres().startAgain());
        provider.ledger().setFaults(HEALTHY);
    }

    private static void quietly(Plan step) {
        try {
            step.run();
        } catch (Exception e) {
            System.out.println("heal step: " + e);
        }
    }

    /** Waits (bounded) until the instance holds a lease, so a kill or pause lands mid-transfer. */
    private static void awaitLeaseHeldBy(String prefix, ServiceInstance instance) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(3).toNanos();
        while (System.nanoTime() < deadline && !checker.holdsALease(prefix, instance.id)) {
            Thread.sleep(10);
        }
    }

    private static long fencedMetrics() {
        return instances.stream().mapToLong(ServiceInstance::fencedWrites).sum();
    }

    private static long fencedLogs() throws IOException {
        long total = 0;
        for (ServiceInstance instance : instances) {
            total += instance.fencedLogLines();
        }
        return total;
    }

    private static void sleep(long millis) throws InterruptedException {
        Thread.sleep(millis); // the fault schedule: how long a fault lasts is the point
    }
}
