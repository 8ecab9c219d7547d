package dev.ledgerline.transfers;

import dev.ledgerline.transfers.local.LocalStack;
import io.quarkus.runtime.LaunchMode;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.annotations.QuarkusMain;

/**
 * Entry point. In dev mode with no database or Redis address configured it first starts the local
 * stack (real PostgreSQL and Redis from Maven artifacts), so {@code ./mvnw quarkus:dev} needs nothing
 * but Java. In prod it never starts anything and stops with one sentence when an address is missing.
 */
@QuarkusMain
public final class LedgerlineMain {

    static final String REACTIVE_URL = "quarkus.datasource.reactive.url";
    static final String JDBC_URL = "quarkus.datasource.jdbc.url";
    static final String REDIS_HOSTS = "quarkus.redis.hosts";

    private LedgerlineMain() {
    }

    public static void main(String... args) {
        if (LaunchMode.current() == LaunchMode.NORMAL) {
            String missing = firstMissing();
            if (missing != null) {
                System.err.println("Ledgerline cannot start: set " + missing
                        + " to the address of the production server (the prod profile never starts embedded servers).");
                System.exit(78); // EX_CONFIG
                return;
            }
        } else if (!configured(REACTIVE_URL) && !configured(REDIS_HOSTS)) {
            startLocalStack();
        }
        deriveJdbcUrl();
        Quarkus.run(args);
    }

    private static void startLocalStack() {
        System.out.println("No datasource or Redis configured: starting local PostgreSQL and Redis...");
        LocalStack stack = LocalStack.start();
        // System properties survive dev-mode restarts, so a live reload does not start a second stack.
        stack.quarkusProperties().forEach(System::setProperty);
        Runtime.getRuntime().addShutdownHook(new Thread(stack::close, "local-stack-stop"));
        System.out.printf("Local PostgreSQL on %s, Redis on %s%n", stack.postgres().reactiveUrl(), stack.redis().uri());
    }

    private static String firstMissing() {
        if (!configured(REACTIVE_URL)) {
            return "QUARKUS_DATASOURCE_REACTIVE_URL";
        }
        if (!configured("quarkus.datasource.username")) {
            return "QUARKUS_DATASOURCE_USERNAME";
        }
        if (!configured(REDIS_HOSTS)) {
            return "QUARKUS_REDIS_HOSTS";
        }
        return null;
    }

    /** Flyway needs a JDBC URL; when only the reactive one is given, the JDBC one follows from it. */
    private static void deriveJdbcUrl() {
        if (!configured(JDBC_URL) && configured(REACTIVE_URL)) {
            String reactive = value(REACTIVE_URL);
            String jdbc = "jdbc:" + reactive.replaceFirst("^postgres(ql)?://", "postgresql://");
            System.setProperty(JDBC_URL, jdbc);
        }
    }

    private static boolean configured(String property) {
        String value = value(property);
        return value != null && !value.isBlank();
    }

    private static String value(String property) {
        String fromSystem = System.getProperty(property);
        if (fromSystem != null) {
            return fromSystem;
        }
        return System.getenv(property.toUpperCase().replace('.', '_').replace('-', '_'));
    }
}
