package dev.ledgerline.transfers.transfer;

import io.vertx.core.net.PemTrustOptions;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.SslMode;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.config.inject.ConfigProperty;

import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The reactive pool's TLS settings ({@code quarkus.datasource.reactive.*}, README "Deploying"), for a PostgreSQL
 * connection the service opens outside that pool: the listening connection of {@link TransferChanges}. It verifies
 * the server exactly as the pool does, or the service does not start: trust stores other than PEM files and client
 * certificates are the pool's alone, and a setting of them is refused here rather than silently not applied.
 */
@ApplicationScoped
public class PostgresTls {

    private final Optional<String> sslMode;
    private final boolean trustAll;
    private final boolean trustPem;
    private final Optional<List<String>> trustedCertificates;
    private final String hostnameVerification;

    public PostgresTls(@ConfigProperty(name = "quarkus.datasource.reactive.postgresql.ssl-mode") Optional<String> sslMode,
                       @ConfigProperty(name = "quarkus.datasource.reactive.trust-all", defaultValue = "false") boolean trustAll,
                       @ConfigProperty(name = "quarkus.datasource.reactive.trust-certificate-pem", defaultValue = "false") boolean trustPem,
                       @ConfigProperty(name = "quarkus.datasource.reactive.trust-certificate-pem.certs") Optional<List<String>> trustedCertificates,
                       @ConfigProperty(name = "quarkus.datasource.reactive.hostname-verification-algorithm", defaultValue = "NONE") String hostnameVerification,
                       @ConfigProperty(name = "quarkus.datasource.reactive.trust-certificate-jks", defaultValue = "false") boolean trustJks,
                       @ConfigProperty(name = "quarkus.datasource.reactive.trust-certificate-pfx", defaultValue = "false") boolean trustPfx,
                       @ConfigProperty(name = "quarkus.datasource.reactive.key-certificate-pem", defaultValue = "false") boolean keyPem,
                       @ConfigProperty(name = "quarkus.datasource.reactive.key-certificate-jks", defaultValue = "false") boolean keyJks,
                       @ConfigProperty(name = "quarkus.datasource.reactive.key-certificate-pfx", defaultValue = "false") boolean keyPfx) {
        if (trustJks || trustPfx || keyPem || keyJks || keyPfx) {
            throw new IllegalStateException("PostgreSQL TLS: name the CA as a PEM file (QUARKUS_DATASOURCE_REACTIVE_TRUST_CERTIFICATE_PEM_CERTS);"
                    + " JKS or PFX trust stores and client certificates would not reach the service's listening connection");
        }
        this.sslMode = sslMode.filter(mode -> !mode.isBlank());
        this.trustAll = trustAll;
        this.trustPem = trustPem;
        this.trustedCertificates = trustedCertificates;
        this.hostnameVerification = hostnameVerification;
    }

    /** Sets the pool's TLS settings on {@code options}, as Quarkus sets them on the pool's. */
    public PgConnectOptions apply(PgConnectOptions options) {
        sslMode.ifPresent(mode -> options.setSslMode(SslMode.of(mode.strip().toLowerCase(Locale.ROOT).replace('_', '-'))));
        options.setTrustAll(trustAll);
        if (trustPem && trustedCertificates.isPresent()) {
            PemTrustOptions pem = new PemTrustOptions();
            trustedCertificates.get().forEach(pem::addCertPath);
            options.setPemTrustOptions(pem);
        }
        if (!"NONE".equalsIgnoreCase(hostnameVerification)) {
            options.setHostnameVerificationAlgorithm(hostnameVerification);
        }
        return options;
    }
}
