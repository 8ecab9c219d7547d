package dev.ledgerline.transfers;

import io.quarkus.runtime.LaunchMode;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.annotations.QuarkusMain;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

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
    static final String INIT_AND_EXIT = "quarkus.init-and-exit";
    static final String SSL_MODE = "quarkus.datasource.reactive.postgresql.ssl-mode";
    static final String TRUSTED_CA = "quarkus.datasource.reactive.trust-certificate-pem.certs";


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
        // the migration Job (QUARKUS_INIT_AND_EXIT) applies the migrations and exits before anything uses Redis, and
        // does not read the Secret that holds Redis's address and password
        if (!configured(REDIS_HOSTS) && !"true".equalsIgnoreCase(value(INIT_AND_EXIT))) {
            return "QUARKUS_REDIS_HOSTS";
        }
        return null;
    }

    /**
     * Flyway needs a JDBC URL; when only the reactive one is given, the JDBC one follows from it, TLS included: the
     * reactive pool's {@code ssl-mode} and the CA it trusts ({@code trust-certificate-pem.certs}, the first file) become
     * the driver's {@code sslmode} and {@code sslrootcert}, so one CA named once verifies both connections
     * (README "Deploying").
     */
    static void deriveJdbcUrl() {
        if (!configured(JDBC_URL) && configured(REACTIVE_URL)) {
            System.setProperty(JDBC_URL, jdbcUrl(value(REACTIVE_URL), value(SSL_MODE), value(TRUSTED_CA)));
        }
    }

    static String jdbcUrl(String reactive, String sslMode, String trustedCas) {
        StringBuilder jdbc = new StringBuilder("jdbc:").append(reactive.replaceFirst("^postgres(ql)?://", "postgresql://"));
        boolean query = reactive.contains("?");
        if (sslMode != null && !sslMode.isBlank() && !reactive.contains("sslmode=")) {
            jdbc.append(query ? '&' : '?').append("sslmode=").append(sslMode.strip().toLowerCase(Locale.ROOT));
            query = true;
        }
        if (trustedCas != null && !trustedCas.isBlank() && !reactive.contains("sslrootcert=")) {
            String ca = trustedCas.split(",")[0].strip();
            jdbc.append(query ? '&' : '?').append("sslrootcert=").append(URLEncoder.encode(ca, StandardCharsets.UTF_8));
        }
        return jdbc.toString();
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
