package dev.ledgerline.transfers.packaged;

import dev.ledgerline.transfers.local.LocalPostgres;
import dev.ledgerline.transfers.local.LocalStack;
import dev.ledgerline.transfers.support.Management;
import io.restassured.RestAssured;
import org.awaitility.Awaitility;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One run of the packaged jar in the prod profile against a local stack, with its own issuer key pair —
 * for the ITs that need a whole running service rather than {@code @QuarkusTest} (several instances sharing
 * Redis, the prod profile's start-up checks, hundreds of fuzzed requests against the real jar).
 */
final class PackagedService implements AutoCloseable {

    static final Path JAR = Path.of("target/quarkus-app/quarkus-run.jar");

    final int port;
    final int managementPort;
    private final Process process;

    private PackagedService(int port, int managementPort, Process process) {
        this.port = port;
        this.managementPort = managementPort;
        this.process = process;
    }

    /** A fresh RSA key pair standing in for the real token issuer, and its public key as a PEM file. */
    static KeyPair issuer() throws Exception {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
        generator.initialize(2048);
        return generator.generateKeyPair();
    }

    static Path publicKeyFile(KeyPair issuer) throws IOException {
        Path file = Files.createTempFile("issuer", ".pem");
        Files.writeString(file, "-----BEGIN PUBLIC KEY-----\n"
                + Base64.getMimeEncoder().encodeToString(issuer.getPublic().getEncoded()) + "\n-----END PUBLIC KEY-----\n");
        return file;
    }

    static Map<String, String> env(LocalStack stack, int port, Path publicKey) {
        Map<String, String> env = new HashMap<>();
        env.put("QUARKUS_HTTP_PORT", Integer.toString(port));
        env.put(Management.PORT_VARIABLE, Integer.toString(Management.freePort()));
        env.put("QUARKUS_DATASOURCE_REACTIVE_URL", stack.postgres().reactiveUrl());
        env.put("QUARKUS_DATASOURCE_USERNAME", LocalPostgres.USER);
        env.put("QUARKUS_REDIS_HOSTS", stack.redis().uri());
        env.put("QUARKUS_REST_CLIENT_PROVIDER_URL", "http://127.0.0.1:9/nowhere");
        env.put("MP_JWT_VERIFY_PUBLICKEY_LOCATION", publicKey.toString());
        env.put("QUARKUS_VERTX_MAX_EVENT_LOOP_EXECUTE_TIME", BlockedThreadReports.MAX_EVENT_LOOP_EXECUTE_TIME);
        env.put("QUARKUS_VERTX_WARNING_EXCEPTION_TIME", BlockedThreadReports.WARNING_EXCEPTION_TIME);
        return env;
    }

    /** Starts the jar with exactly this environment (plus the machine's, minus its Quarkus/JWT settings) and waits until it is live. */
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
     * Launches the jar with exactly this environment (plus the machine's, minus its Quarkus/JWT/Ledgerline
     * settings) and does not wait; output goes to {@code log}, so the service never blocks on a full pipe.
     */
    static Process launch(Map<String, String> env, Path log) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar", JAR.toString()).redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().keySet().removeIf(k -> k.startsWith("QUARKUS_") || k.startsWith("MP_JWT") || k.startsWith("LEDGERLINE_"));
        builder.environment().putAll(env);
        return builder.start();
    }

    static int free() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
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
