package dev.ledgerline.transfers.faults;

import dev.ledgerline.devstack.LocalStack;
import dev.ledgerline.devstack.Signals;
import dev.ledgerline.transfers.support.Management;
import dev.ledgerline.transfers.support.Metrics;
import dev.ledgerline.transfers.packaged.PackagedJar;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One JVM running the packaged service ({@link PackagedJar}, prod profile) on its own port, with its own instance
 * id. The suite kills (SIGKILL), pauses (SIGSTOP) and restarts it; its output is appended to one log file across
 * restarts, so its stale-write lines survive a SIGKILL even though its metrics do not.
 */
final class ServiceInstance implements AutoCloseable {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofMillis(500)).build();

    /** Changes when the suite restarts a killed instance as a new actor, so its successors' work is told apart. */
    volatile String id;
    final int port;
    private final int managementPort;
    final Path log;
    private final Map<String, String> env;
    private final List<String> systemProperties;
    private volatile Process process;
    private volatile boolean paused;
    /** Stale writes counted by incarnations that are gone (their last scrape). */
    private long fencedByEarlierIncarnations;
    private long lastScrape;

    ServiceInstance(String id, int port, Path log, Map<String, String> env, List<String> systemProperties) {
        this.id = id;
        this.port = port;
        this.managementPort = PackagedJar.freePort();
        this.log = log;
        this.env = env;
        this.systemProperties = systemProperties;
    }

    /**
     * What every packaged instance of the suite runs with: the local stack, the provider, the issuer's key, rate
     * limits out of the way (the suite tests the pipeline, RateLimitTest the limiter) and timings short enough
     * that leases and back-offs play out in seconds.
     */
    static Map<String, String> suiteEnv(LocalStack stack, String providerUrl, Path publicKey) {
        Map<String, String> env = PackagedJar.env(stack, providerUrl, publicKey);
        env.put("LEDGERLINE_RATE_LIMIT_WRITES_PER_SECOND", "100000");
        env.put("LEDGERLINE_RATE_LIMIT_WRITES_BURST", "100000");
        env.put("LEDGERLINE_RATE_LIMIT_READS_PER_SECOND", "100000");
        env.put("LEDGERLINE_RATE_LIMIT_READS_BURST", "100000");
        env.put("LEDGERLINE_PROVIDER_TIMEOUT_MS", "1000");
        env.put("LEDGERLINE_PIPELINE_MARGIN", "PT0.5S");
        env.put("LEDGERLINE_PIPELINE_LOCK_TTL", "PT3S");
        env.put("LEDGERLINE_PIPELINE_LEASE", "PT3S");
        env.put("LEDGERLINE_PIPELINE_SWEEP_EVERY", "1s");
        env.put("LEDGERLINE_PIPELINE_PENDING_GRACE", "PT1S");
        env.put("LEDGERLINE_PIPELINE_RETRY_BACKOFF", "PT0.2S");
        env.put("LEDGERLINE_PIPELINE_MAX_RETRY_BACKOFF", "PT1S");
        return env;
    }

    String url() {
        return "http://127.0.0.1:" + port;
    }

    /** Health and metrics: the management interface, on a port of its own. */
    String managementUrl() {
        return Management.url(managementPort);
    }

    /**
     * Starts the jar ({@link PackagedJar#start}) with a small heap and a quick JIT, as three of them share the
     * machine, and this instance's ports and id on top of the suite's environment; output is appended to the log.
     */
    synchronized void start() throws IOException {
        List<String> jvmOptions = new ArrayList<>(List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k"));
        jvmOptions.addAll(systemProperties);
        Map<String, String> instanceEnv = new HashMap<>(env);
        instanceEnv.put("QUARKUS_HTTP_PORT", Integer.toString(port));
        instanceEnv.put(Management.PORT_VARIABLE, Integer.toString(managementPort));
        instanceEnv.put("LEDGERLINE_INSTANCE_ID", id);
        process = PackagedJar.start(jvmOptions, instanceEnv, ProcessBuilder.Redirect.appendTo(log.toFile()));
        paused = false;
        lastScrape = 0;
    }

    /**
     * Starts a killed instance again under a new id: events written after the crash then show which actor
     * finished its transfers, which the same id would hide.
     */
    synchronized void restartAs(String newId) throws IOException {
        if (isAlive()) {
            throw new IllegalStateException(id + " is still running");
        }
        id = newId;
        start();
    }

    /** Polls readiness until the deadline; fails early if the process died. */
    void awaitReady(Duration within) throws Exception {
        long deadline = System.nanoTime() + within.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException(id + " exited with " + process.exitValue() + "; see " + log);
            }
            try {
                HttpResponse<Void> r = HTTP.send(HttpRequest.newBuilder(URI.create(managementUrl() + "/q/health/ready"))
                        .timeout(Duration.ofSeconds(1)).build(), HttpResponse.BodyHandlers.discarding());
                if (r.statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            Thread.sleep(200);
        }
        throw new IllegalStateException(id + " was not ready within " + within + "; see " + log);
    }

    /** SIGKILL, as a crash: whatever it was doing is cut off, and its in-memory counters are lost. */
    synchronized void kill() throws InterruptedException {
        Process p = process;
        if (p != null && p.isAlive()) {
            fencedByEarlierIncarnations += lastScrape;
            lastScrape = 0;
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
        paused = false;
    }

    /**
     * SIGTERM, as an orchestrator stops an instance in a rolling deploy; waits for the process to exit and
     * answers how long that took, or {@code null} if it was still running after {@code within}.
     */
    Duration terminate(Duration within) throws InterruptedException {
        Process p = process;
        long started = System.nanoTime();
        p.destroy();
        if (!p.waitFor(within.toMillis(), TimeUnit.MILLISECONDS)) {
            return null;
        }
        return Duration.ofNanos(System.nanoTime() - started);
    }

    void pause() throws IOException {
        Signals.send("STOP", process.pid());
        paused = true;
    }

    void resume() throws IOException {
        Signals.send("CONT", process.pid());
        paused = false;
    }

    boolean isAlive() {
        Process p = process;
        return p != null && p.isAlive();
    }

    /**
     * Stale (fenced) writes this instance counted, across its incarnations: the Prometheus counter
     * {@code ledgerline_fence_stale_total}, plus what killed incarnations had shown at their last scrape.
     */
    synchronized long fencedWrites() {
        if (isAlive() && !paused) {
            try {
                HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(managementUrl() + "/q/metrics"))
                        .timeout(Duration.ofSeconds(3)).build(), HttpResponse.BodyHandlers.ofString());
                lastScrape = Math.max(0, (long) Metrics.sum(r.body(), "ledgerline_fence_stale_total", ""));
            } catch (IOException | InterruptedException | RuntimeException e) {
                // keep the last scrape
            }
        }
        return fencedByEarlierIncarnations + lastScrape;
    }

    /**
     * The sum of a Prometheus metric's samples whose labels contain {@code labelFragment}, from this
     * incarnation; 0 when the metric has no sample yet. Never called on a paused or dead instance. The
     * generous timeout is for an instance that was just resumed or restarted on a loaded machine.
     */
    double metric(String name, String labelFragment) throws IOException, InterruptedException {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(managementUrl() + "/q/metrics"))
                .timeout(Duration.ofSeconds(15)).build(), HttpResponse.BodyHandlers.ofString());
        return Math.max(0, Metrics.sum(r.body(), name, labelFragment));
    }

    /** As {@link #metric}, but a gauge may be negative (a clock offset behind): not clamped at zero. */
    double gauge(String name, String labelFragment) throws IOException, InterruptedException {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(managementUrl() + "/q/metrics"))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
        double sum = Metrics.sum(r.body(), name, labelFragment);
        return sum == -1 && !r.body().contains(name) ? Double.NaN : sum;
    }

    /** Whether the instance answers readiness with 503 right now: it noticed a dependency is gone. */
    boolean reportsNotReady() {
        try {
            return HTTP.send(HttpRequest.newBuilder(URI.create(managementUrl() + "/q/health/ready")).timeout(Duration.ofSeconds(1)).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode() == 503;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Stale-write log lines so far (they survive a SIGKILL). */
    long fencedLogLines() throws IOException {
        if (!Files.exists(log)) {
            return 0;
        }
        try (var lines = Files.lines(log)) {
            return lines.filter(l -> l.contains("step=fence stale worker") || l.contains("but the row moved on (stale)")).count();
        }
    }

    /** Resumes and stops the process; never leaves a stopped or running JVM behind. */
    @Override
    public synchronized void close() {
        Process p = process;
        if (p == null) {
            return;
        }
        try {
            if (paused) {
                Signals.send("CONT", p.pid());
            }
        } catch (IOException ignored) {
            // it is killed below anyway
        }
        p.destroy();
        try {
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
