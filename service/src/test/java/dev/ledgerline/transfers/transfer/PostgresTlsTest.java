package dev.ledgerline.transfers.transfer;

import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.SslMode;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The listening connection gets the pool's TLS settings, or the service does not start ({@code TlsIT} runs them against
 * a PostgreSQL with {@code ssl=on}).
 */
class PostgresTlsTest {

    @Test
    void theListeningConnectionVerifiesTheServerAsThePoolDoes() {
        PgConnectOptions options = tls(Optional.of("verify-full"), true, "HTTPS", false).apply(PgConnectOptions.fromUri("postgresql://db:5432/l"));
        assertEquals(SslMode.VERIFY_FULL, options.getSslMode());
        assertEquals(List.of("/etc/ledgerline/ca/pg-ca.pem"), options.getPemTrustOptions().getCertPaths());
        assertEquals("HTTPS", options.getHostnameVerificationAlgorithm());
        assertFalse(options.isTrustAll());
    }

    @Test
    void withoutTlsSettingsTheUrlDecides() {
        PgConnectOptions options = tls(Optional.empty(), false, "NONE", false).apply(PgConnectOptions.fromUri("postgresql://db/l?sslmode=require"));
        assertEquals(SslMode.REQUIRE, options.getSslMode());
        assertNull(options.getPemTrustOptions());
    }

    @Test
    void aTrustStoreOrClientCertificateTheListeningConnectionCannotCarryStopsTheStart() {
        IllegalStateException refused = assertThrows(IllegalStateException.class, () -> tls(Optional.of("verify-full"), false, "HTTPS", true));
        assertTrue(refused.getMessage().contains("QUARKUS_DATASOURCE_REACTIVE_TRUST_CERTIFICATE_PEM_CERTS"), refused.getMessage());
    }

    private static PostgresTls tls(Optional<String> mode, boolean pem, String hostnameVerification, boolean jks) {
        return new PostgresTls(mode, false, pem, pem ? Optional.of(List.of("/etc/ledgerline/ca/pg-ca.pem")) : Optional.empty(),
                hostnameVerification, jks, false, false, false, false);
    }
}
