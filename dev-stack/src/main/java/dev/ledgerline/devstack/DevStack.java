package dev.ledgerline.devstack;

import java.util.Map;

/**
 * The servers of {@code ./mvnw quarkus:dev}: starts the local stack once per JVM and answers the Quarkus
 * properties that point the service at it. They also become system properties, which makes them visible
 * to every later configuration and keeps a live reload from starting a second stack.
 *
 * <p>Reached only through {@link dev.ledgerline.devstack.DevStackConfigSourceFactory} in the dev
 * profile: the packaged application contains neither this package nor the server artifacts.
 */
public final class DevStack {

    private static Map<String, String> started;

    private DevStack() {
    }

    /** Starts the local PostgreSQL and Redis (once) and answers their addresses as Quarkus properties. */
    public static synchronized Map<String, String> start() {
        if (started == null) {
            System.out.println("No datasource or Redis configured: starting local PostgreSQL and Redis...");
            LocalStack stack = LocalStack.start();
            started = stack.quarkusProperties();
            started.forEach(System::setProperty);
            // quiet: a failure is one line, never a stack trace over the last lines of the dev session
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    stack.close();
                } catch (RuntimeException e) {
                    System.err.println("Local PostgreSQL/Redis did not stop cleanly: " + e);
                }
            }, "local-stack-stop"));
            System.out.printf("Local PostgreSQL on %s, Redis on %s%n", stack.postgres().reactiveUrl(), stack.redis().uri());
        }
        return started;
    }
}
