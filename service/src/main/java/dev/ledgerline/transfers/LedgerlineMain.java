package dev.ledgerline.transfers;

import io.quarkus.runtime.LaunchMode;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.annotations.QuarkusMain;

/**
 * Entry point. A packaged (prod) run never starts embedded servers: when an address is missing it
 * stops with one sentence naming the variable to set. Dev mode gets its local PostgreSQL and Redis through
 * {@link dev.ledgerline.devstack.DevStackConfigSourceFactory}, which has already set the
 * addresses by the time this runs; tests get theirs from a test resource.
 */
@QuarkusMain
public final class LedgerlineMain {

    static final String REACTIVE_URL = "quarkus.datasource.reactive.url";
    static final String JDBC_URL = "quarkus.datasource.jdbc.url";
    static final String REDIS_HOSTS = "quarkus.redis.hosts";


    public static void main(String... args) {
        if (LaunchMode.current() == LaunchMode.NORMAL) {
            String missing = firstMissing();
            if (missing != null) {
                System.err.println("Ledgerline cannot start: set " + missing
                        + " to the address of the production server (the prod profile never starts embedded servers).");
                System.exit(78); // EX_CONFIG
                return;
            }
        }
        deriveJdbcUrl();
        Quarkus.run(args);
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
