package dev.ledgerline.transfers.support;

import dev.ledgerline.devstack.LocalPostgres;
import org.flywaydb.core.Flyway;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;

/**
 * A PostgreSQL of one test class's own, without the service: the local stack's server, migrated with the
 * service's Flyway migrations as whichever role the test names. For tests of what the database itself refuses,
 * whoever is connected, and of the roles in {@code ops/roles.sql}.
 */
public final class OwnPostgres implements AutoCloseable {

    /** The superuser the local server is created with. */
    public static final String SUPERUSER = LocalPostgres.USER;

    private final LocalPostgres server;

    private OwnPostgres(LocalPostgres server) {
        this.server = server;
    }

    /** A fresh, empty cluster. */
    public static OwnPostgres start() {
        try {
            return new OwnPostgres(LocalPostgres.start());
        } catch (IOException e) {
            throw new UncheckedIOException("Could not start a PostgreSQL for the test", e);
        }
    }

    /** Applies the service's migrations ({@code db/migration}) connected as {@code role}. */
    public OwnPostgres migrate(String role) {
        flyway(role).migrate();
        return this;
    }

    /** Flyway over the service's migrations, connected as {@code role}, as the service configures it. */
    public Flyway flyway(String role) {
        return Flyway.configure().dataSource(server.jdbcUrl(), role, "").locations("classpath:db/migration").load();
    }

    public String jdbcUrl() {
        return server.jdbcUrl();
    }

    /**
     * A connection as {@code role} (the local server trusts loopback connections: no password). It speaks the simple
     * query protocol, as psql does: a script goes to the server as written, and {@code EXPLAIN (GENERIC_PLAN)} takes a
     * statement with {@code $1} placeholders and no values for them.
     */
    public Connection connect(String role) throws SQLException {
        Properties props = new Properties();
        props.setProperty("user", role);
        props.setProperty("password", "");
        props.setProperty("preferQueryMode", "simple");
        return DriverManager.getConnection(server.jdbcUrl(), props);
    }

    /** Runs a SQL file as the superuser, the way an administrator runs it with {@code psql -f}. */
    public void runScript(Path file) throws IOException, SQLException {
        String script = Files.readString(file);
        try (Connection c = connect(SUPERUSER); Statement st = c.createStatement()) {
            st.execute(script);
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
    }
}
