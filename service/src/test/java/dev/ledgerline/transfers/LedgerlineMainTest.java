package dev.ledgerline.transfers;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The JDBC URL Flyway uses, derived from the reactive one: the same server, and the same TLS verification. */
class LedgerlineMainTest {

    @Test
    void withoutTlsSettingsTheJdbcUrlNamesTheSameServer() {
        assertEquals("jdbc:postgresql://db:5432/ledgerline", LedgerlineMain.jdbcUrl("postgresql://db:5432/ledgerline", null, null));
        assertEquals("jdbc:postgresql://db/ledgerline", LedgerlineMain.jdbcUrl("postgres://db/ledgerline", "", " "));
    }

    @Test
    void theReactivePoolsSslModeAndCaBecomeTheDriversSoFlywayVerifiesTheSameWay() {
        assertEquals("jdbc:postgresql://db:5432/ledgerline?sslmode=verify-full&sslrootcert=%2Fetc%2Fledgerline%2Fpg%2Fca.pem",
                LedgerlineMain.jdbcUrl("postgresql://db:5432/ledgerline", "verify-full",
                        "/etc/ledgerline/pg/ca.pem, /etc/other.pem"));
        assertEquals("jdbc:postgresql://db/l?application_name=x&sslmode=verify-ca",
                LedgerlineMain.jdbcUrl("postgresql://db/l?application_name=x", "verify-ca", null));
    }

    @Test
    void whatTheReactiveUrlAlreadySaysIsNotSaidTwice() {
        assertEquals("jdbc:postgresql://db/l?sslmode=require&sslrootcert=%2Fca.pem",
                LedgerlineMain.jdbcUrl("postgresql://db/l?sslmode=require", "verify-full", "/ca.pem"));
    }
}
