package dev.ledgerline.transfers.packaged;

import dev.ledgerline.devstack.FreePorts;
import dev.ledgerline.devstack.LocalPostgres;
import dev.ledgerline.devstack.LocalStack;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The packaged application ({@code ./mvnw package}) and the one way the ITs start it: where the jar is, the command
 * line, and the environment every packaged instance needs against a local stack. What wraps the process (one
 * service waited for until live, or an instance a fault suite kills, pauses and restarts) is the caller's.
 */
public final class PackagedJar {

    /** The service module's build output (the ITs run in their own module, beside it). */
    public static final Path SERVICE_TARGET = Path.of(System.getProperty("ledgerline.service.target", "../service/target"));
    /** The fast-jar layout the service's build writes. */
    public static final Path APP = SERVICE_TARGET.resolve("quarkus-app");
    public static final Path JAR = APP.resolve("quarkus-run.jar");
    /** Every packaged test instance signs provider references with this, so instances agree on them. */
    public static final String REFERENCE_SECRET = "packaged-test-reference-secret";

    private PackagedJar() {
    }

    /**
     * What a packaged instance in the prod profile needs to start against {@code stack}: its database and Redis,
     * the provider at {@code providerUrl}, the issuer's public key, and the secret of its provider references.
     * Ports and everything a test tunes are the caller's to add.
     */
    public static Map<String, String> env(LocalStack stack, String providerUrl, Path publicKey) {
        Map<String, String> env = new HashMap<>();
        env.put("QUARKUS_DATASOURCE_REACTIVE_URL", stack.postgres().reactiveUrl());
        env.put("QUARKUS_DATASOURCE_USERNAME", LocalPostgres.USER);
        env.put("QUARKUS_REDIS_HOSTS", stack.redis().uri());
        env.put("QUARKUS_REST_CLIENT_PROVIDER_URL", providerUrl);
        env.put("MP_JWT_VERIFY_PUBLICKEY_LOCATION", publicKey.toString());
        env.put("LEDGERLINE_IDEMPOTENCY_REFERENCE_SECRET", REFERENCE_SECRET);
        // prod accounts hold only what was credited; the suites' principals open with more than any load spends
        env.put("LEDGERLINE_LEDGER_OPENING_BALANCE", "100000000000");
        return env;
    }

    /** A loopback port free right now, for a packaged instance's API or management interface (this fork's window). */
    public static int freePort() {
        try {
            return FreePorts.find();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** This JVM's {@code java}, then {@code jvmOptions} (heap, GC, {@code -D} properties), then {@code -jar} the jar. */
    public static List<String> command(List<String> jvmOptions) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmOptions);
        command.addAll(List.of("-jar", JAR.toString()));
        return command;
    }

    /**
     * Starts the jar and does not wait. Its environment is exactly {@code env} on top of the machine's without the
     * machine's own Quarkus, JWT and Ledgerline settings, so nothing set for another run leaks in. Its standard output
     * and error both go to {@code output}, so the service never blocks on a full pipe.
     */
    public static Process start(List<String> jvmOptions, Map<String, String> env, ProcessBuilder.Redirect output) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(command(jvmOptions)).redirectErrorStream(true).redirectOutput(output);
        builder.environment().keySet().removeIf(k -> k.startsWith("QUARKUS_") || k.startsWith("MP_JWT") || k.startsWith("LEDGERLINE_"));
        builder.environment().putAll(env);
        return builder.start();
    }
}
