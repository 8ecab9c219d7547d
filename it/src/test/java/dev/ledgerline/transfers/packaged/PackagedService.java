package dev.ledgerline.transfers.packaged;

import dev.ledgerline.devstack.LocalStack;
import dev.ledgerline.transfers.support.Management;
import io.restassured.RestAssured;
import org.awaitility.Awaitility;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One run of the packaged jar ({@link PackagedJar}) in the prod profile against a local stack, trusting a test
 * issuer's key — for the ITs that need a whole running service rather than {@code @QuarkusTest} (several instances
 * sharing Redis, the prod profile's start-up checks, hundreds of fuzzed requests against the real jar).
 */
final class PackagedService implements AutoCloseable {

    final int port;
    final int managementPort;
    private final Process process;

    private PackagedService(int port, int managementPort, Process process) {
        this.port = port;
        this.managementPort = managementPort;
        this.process = process;
    }

    /**
     * The packaged environment on {@code port} and a free management port, with no provider (nothing here sends a
     * payment) and Vert.x's blocked-thread reports as sensitive as the test profile's.
     */
    static Map<String, String> env(LocalStack stack, int port, Path publicKey) {
        Map<String, String> env = PackagedJar.env(stack, "http://127.0.0.1:9/nowhere", publicKey);
        env.put("QUARKUS_HTTP_PORT", Integer.toString(port));
        env.put(Management.PORT_VARIABLE, Integer.toString(PackagedJar.freePort()));
        env.put("QUARKUS_VERTX_MAX_EVENT_LOOP_EXECUTE_TIME", BlockedThreadReports.MAX_EVENT_LOOP_EXECUTE_TIME);
        env.put("QUARKUS_VERTX_WARNING_EXCEPTION_TIME", BlockedThreadReports.WARNING_EXCEPTION_TIME);
        return env;
    }

    /** Starts the jar with this environment ({@link PackagedJar#start}) and waits until it is live. */
    static PackagedService start(Map<String, String> env, Path log) throws IOException {
        Process process = launch(env, log);
        int port = Integer.parseInt(env.get("QUARKUS_HTTP_PORT"));
        int managementPort = Integer.parseInt(env.get(Management.PORT_VARIABLE));
        PackagedService service = new PackagedService(port, managementPort, process);
        try {
            Awaitility.await("the packaged service on :" + port + " answers").atMost(Duration.ofSeconds(90))
                    .pollInterval(Duration.ofMillis(250)).ignoreExceptions()
                    .failFast("the service exited; see " + log, () -> !process.isAlive())
                    .until(() -> Management.given(managementPort).get("/q/health/live").statusCode() == 200);
        } catch (RuntimeException e) {
            service.close();
            throw e;
        }
        return service;
    }

    /**
     * Launches the jar with this environment ({@link PackagedJar#start}), the JVM's default options, and does not
     * wait; output goes to {@code log}, written anew.
     */
    static Process launch(Map<String, String> env, Path log) throws IOException {
        return PackagedJar.start(List.of(), env, ProcessBuilder.Redirect.to(log.toFile()));
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
