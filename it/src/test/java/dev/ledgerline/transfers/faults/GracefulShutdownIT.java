package dev.ledgerline.transfers.faults;

import dev.ledgerline.devstack.LocalPostgres;
import dev.ledgerline.devstack.LocalStack;
import dev.ledgerline.devstack.sandbox.SandboxFaults;
import dev.ledgerline.transfers.support.Issuer;
import dev.ledgerline.transfers.packaged.PackagedJar;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A rolling deploy, as an orchestrator does it: SIGTERM one of two packaged instances while clients keep
 * creating transfers through it. A load balancer polls readiness and stops routing to the instance a moment
 * after it sees DOWN. Checked: readiness goes DOWN at once; every request the instance received got an HTTP
 * answer (none cut off); the process exits within delay + timeout + shutdown-grace + 1 s; every transfer
 * answered {@code 201} by either instance ends {@code sent}, once, with the second instance taking over what
 * the first left.
 */
class GracefulShutdownIT {

    private static final Duration DELAY = Duration.ofSeconds(3);
    private static final Duration TIMEOUT = Duration.ofSeconds(4);
    private static final Duration GRACE = Duration.ofSeconds(3);
    /** The stated bound, plus what a JVM needs to run its last hooks and exit on a loaded machine. */
    private static final Duration EXIT_BOUND = DELAY.plus(TIMEOUT).plus(GRACE).plus(Duration.ofSeconds(1));
    private static final Duration JVM_EXIT_SLACK = Duration.ofSeconds(4);
    /** How long after seeing readiness DOWN the load balancer still routes to the instance. */
    private static final Duration LB_LAG = Duration.ofSeconds(1);
    private static final Pattern ID = Pattern.compile("\"id\"\\s*:\\s*\"([0-9a-f-]{36})\"");

    private static LocalStack stack;
    private static ProviderServer provider;
    private static Issuer issuer;
    private static ServiceInstance leaving;
    private static ServiceInstance staying;

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2)).build();

    /** One client request: where it went, when it started, and its answer (a status) or what cut it off. */
    record Call(String target, long startedNanos, int status, String failure, String transferId) {
    }

    @BeforeAll
    static void start() throws Exception {
        assertTrue(Files.exists(PackagedJar.JAR), "build the jar first: ./mvnw package");
        stack = LocalStack.start();
        provider = ProviderServer.start();
        // non-idempotent, so a second execution of any reference would show; each send takes 200 ms, so passes are in flight
        provider.ledger().setFaults(new SandboxFaults(200L, 0.0, 0.0, 0.0, 0.0, 0.0, false, 1500L));
        issuer = Issuer.fresh();

        Path logs = Files.createDirectories(Path.of("target/faults"));
        Map<String, String> env = ServiceInstance.suiteEnv(stack, provider.url(), issuer.publicKey());
        env.put("LEDGERLINE_PIPELINE_SHUTDOWN_GRACE", "PT" + GRACE.toSeconds() + "S");
        env.put("QUARKUS_SHUTDOWN_DELAY", "PT" + DELAY.toSeconds() + "S");
        env.put("QUARKUS_SHUTDOWN_TIMEOUT", "PT" + TIMEOUT.toSeconds() + "S");
        List<String> props = List.of();
        Path leavingLog = logs.resolve("shutdown-leaving.log");
        Path stayingLog = logs.resolve("shutdown-staying.log");
        Files.deleteIfExists(leavingLog);
        Files.deleteIfExists(stayingLog);
        leaving = new ServiceInstance("leaving", PackagedJar.freePort(), leavingLog, env, props);
        staying = new ServiceInstance("staying", PackagedJar.freePort(), stayingLog, env, props);
        leaving.start();
        leaving.awaitReady(Duration.ofSeconds(120));
        staying.start();
        staying.awaitReady(Duration.ofSeconds(120));
    }

    @AfterAll
    static void stop() throws Exception {
        if (leaving != null) {
            leaving.close();
        }
        if (staying != null) {
            staying.close();
        }
        if (provider != null) {
            provider.close();
        }
        if (stack != null) {
            stack.close();
        }
        if (issuer != null) {
            issuer.close();
        }
    }

    @Test
    void aSigtermedInstanceAnswersEveryRequestItTookExitsInTimeAndEveryAcceptedTransferEndsSentOnce() throws Exception {
        String token = issuer.writer("rolling-deploy");
        AtomicBoolean routeToLeaving = new AtomicBoolean(true);
        AtomicBoolean loadRunning = new AtomicBoolean(true);
        AtomicLong downSeenAt = new AtomicLong();
        ConcurrentLinkedQueue<Call> calls = new ConcurrentLinkedQueue<>();

        List<Thread> clients = new ArrayList<>();
        for (int c = 0; c < 6; c++) {
            Thread client = new Thread(() -> {
                while (loadRunning.get()) {
                    ServiceInstance target = routeToLeaving.get() ? leaving : staying;
                    calls.add(create(target, token));
                }
            }, "client-" + c);
            client.start();
            clients.add(client);
        }
        // the load balancer: polls readiness every 100 ms from the SIGTERM on, stops routing to the instance LB_LAG after
        // it saw DOWN (a readiness probe that times out earlier, on a loaded machine, is not what this test is about)
        AtomicBoolean terminating = new AtomicBoolean();
        Thread balancer = new Thread(() -> {
            while (loadRunning.get() && !terminating.get()) {
                sleepQuietly(10);
            }
            while (loadRunning.get() && downSeenAt.get() == 0) {
                if (readinessStatus(leaving) != 200) {
                    downSeenAt.set(System.nanoTime());
                    break;
                }
                sleepQuietly(100);
            }
            sleepQuietly(LB_LAG.toMillis());
            routeToLeaving.set(false);
        }, "load-balancer");
        balancer.start();

        Awaitility.await("some transfers were accepted before the SIGTERM").atMost(Duration.ofSeconds(30))
                .until(() -> calls.stream().filter(c -> c.status() == 201).count() >= 20);
        long sigterm = System.nanoTime();
        terminating.set(true);
        Duration exitedAfter = leaving.terminate(EXIT_BOUND.plus(JVM_EXIT_SLACK).plusSeconds(10));
        Awaitility.await("the load balancer moved to the other instance").atMost(Duration.ofSeconds(10))
                .until(() -> !routeToLeaving.get());
        loadRunning.set(false);
        for (Thread client : clients) {
            client.join(15_000);
        }
        balancer.join(5_000);

        // 1. the instance exits within the stated bound
        assertNotNull(exitedAfter, "the instance was still running after " + EXIT_BOUND.plus(JVM_EXIT_SLACK).plusSeconds(10));
        System.out.printf("GracefulShutdownIT: exited %d ms after SIGTERM (bound %d ms + %d ms JVM slack)%n",
                exitedAfter.toMillis(), EXIT_BOUND.toMillis(), JVM_EXIT_SLACK.toMillis());
        assertTrue(exitedAfter.compareTo(EXIT_BOUND.plus(JVM_EXIT_SLACK)) <= 0, "exited after " + exitedAfter);

        // 2. readiness went DOWN at once, and the instance kept answering while it was DOWN
        assertTrue(downSeenAt.get() > sigterm, "readiness DOWN was seen");
        long downAfterMs = Duration.ofNanos(downSeenAt.get() - sigterm).toMillis();
        assertTrue(downAfterMs < 2_000, "readiness DOWN " + downAfterMs + " ms after SIGTERM");
        List<Call> toLeaving = calls.stream().filter(c -> c.target().equals(leaving.id)).toList();
        List<Call> whileDown = toLeaving.stream().filter(c -> c.startedNanos() >= downSeenAt.get()).toList();
        List<Call> cutOff = toLeaving.stream().filter(c -> c.status() == 0).toList();
        System.out.printf("GracefulShutdownIT: %d requests to the leaving instance, %d after readiness DOWN (%s), none cut off: %s%n",
                toLeaving.size(), whileDown.size(), statuses(whileDown), cutOff.isEmpty());
        assertTrue(cutOff.isEmpty(), "requests the leaving instance took but never answered: " + cutOff);
        assertTrue(whileDown.stream().anyMatch(c -> c.status() == 201), "it still served while readiness was DOWN: " + statuses(whileDown));

        // 3. every 201, from either instance, ends sent — what the leaving one left, the staying one finishes
        List<String> accepted = calls.stream().filter(c -> c.status() == 201).map(Call::transferId).toList();
        Awaitility.await("every accepted transfer ends sent").atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofSeconds(1))
                .until(() -> notSent(accepted) == 0);
        // 4. once each: the provider (non-idempotent) executed no reference twice
        assertEquals(0, provider.ledger().stats().duplicateExecutions(), "duplicate executions at the provider");
        for (String id : accepted) {
            assertEquals(1, provider.ledger().executions(reference(id)), "executions of transfer " + id);
        }
        // 5. the pipeline's own shutdown ran and said what it did
        String log = Files.readString(leaving.log);
        assertTrue(log.contains("step=shutdown pipeline stopped"), "the pipeline shutdown is logged");
        System.out.printf("GracefulShutdownIT: %d transfers accepted, all sent once; %s%n", accepted.size(),
                log.lines().filter(l -> l.contains("step=shutdown")).toList());
    }

    private Call create(ServiceInstance target, String token) {
        long started = System.nanoTime();
        HttpRequest request = HttpRequest.newBuilder(URI.create(target.url() + "/v1/transfers"))
                .timeout(Duration.ofSeconds(20))
                .header("Authorization", "Bearer " + token)
                .header("Content-Type", "application/json")
                .header("Idempotency-Key", UUID.randomUUID().toString())
                .POST(HttpRequest.BodyPublishers.ofString(
                        "{\"amount\": 5, \"currency\": \"EUR\", \"destination\": {\"iban\": \"DE89370400440532013000\", \"name\": \"Ada\"}}"))
                .build();
        try {
            HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
            Matcher id = ID.matcher(response.body());
            return new Call(target.id, started, response.statusCode(), null, id.find() ? id.group(1) : null);
        } catch (java.net.ConnectException refused) {
            // never got in: the listener was closed (after the load balancer stopped routing here); not a dropped request
            return new Call(target.id, started, -1, "refused", null);
        } catch (IOException e) {
            return new Call(target.id, started, 0, e.toString(), null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Call(target.id, started, 0, e.toString(), null);
        }
    }

    private int readinessStatus(ServiceInstance instance) {
        try {
            return http.send(HttpRequest.newBuilder(URI.create(instance.managementUrl() + "/q/health/ready")).timeout(Duration.ofSeconds(1)).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
            return 0;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 0;
        }
    }

    private static Map<Integer, Long> statuses(List<Call> calls) {
        Map<Integer, Long> counts = new java.util.TreeMap<>();
        calls.forEach(c -> counts.merge(c.status(), 1L, Long::sum));
        return counts;
    }

    private static long notSent(List<String> ids) throws Exception {
        try (Connection c = DriverManager.getConnection(stack.postgres().jdbcUrl(), LocalPostgres.USER, "");
             PreparedStatement st = c.prepareStatement("SELECT count(*) FROM transfers WHERE id = ANY(?::uuid[]) AND status <> 'sent'")) {
            st.setArray(1, c.createArrayOf("text", ids.toArray()));
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    private static String reference(String id) throws Exception {
        try (Connection c = DriverManager.getConnection(stack.postgres().jdbcUrl(), LocalPostgres.USER, "");
             PreparedStatement st = c.prepareStatement("SELECT provider_reference FROM transfers WHERE id = ?::uuid")) {
            st.setString(1, id);
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                return rs.getString(1);
            }
        }
    }

    /** The simulated load balancer's own pacing (its probe interval and its routing lag), not a wait on the service. */
    private static void sleepQuietly(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
