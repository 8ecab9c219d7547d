package dev.ledgerline.devstack;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The fault suite's crash is only worth something if it really loses what PostgreSQL acknowledged: an
 * immediate stop right after a burst of asynchronous commits takes the last of them away, keeps what reached
 * the WAL files, and leaves a data directory the server starts from again.
 */
class LocalPostgresCrashTest {

    private static LocalPostgres pg;

    @BeforeAll
    static void start() throws Exception {
        pg = LocalPostgres.start();
        try (Connection c = connect(); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE acknowledged (n integer PRIMARY KEY)");
            // on disk before any test crashes the server: the tests run in either order, and an immediate stop with
            // synchronous_commit=off may lose the table's own commit as well as the rows
            st.execute("CHECKPOINT");
        }
    }

    @AfterAll
    static void stop() throws Exception {
        pg.close();
    }

    @Test
    void anImmediateStopLosesAcknowledgedCommitsAndTheServerRecoversTheRest() throws Exception {
        int acknowledged = 0;
        int survived = 0;
        // the WAL writer writes every 200 ms: a crash a few milliseconds after the last commit nearly always
        // beats it, and three tries make "nearly" negligible
        for (int attempt = 0; attempt < 3 && survived == acknowledged; attempt++) {
            int checkpointed;
            try (Connection c = connect(); Statement st = c.createStatement()) {
                st.execute("TRUNCATE acknowledged");
                st.execute("INSERT INTO acknowledged SELECT generate_series(1, 100)");
                st.execute("CHECKPOINT"); // these are on disk whatever happens next
                checkpointed = 100;
                for (int n = 101; n <= 400; n++) {
                    st.executeUpdate("INSERT INTO acknowledged VALUES (" + n + ")"); // one acknowledged commit each
                }
                acknowledged = 400;
                pg.crash();
            }
            assertFalse(pg.isRunning());
            assertFalse(Files.exists(pg.dataDir().resolve("postmaster.pid")), "the crash left a pid file behind");
            pg.startAgain();
            try (Connection c = connect(); Statement st = c.createStatement();
                 ResultSet rs = st.executeQuery("SELECT count(*), coalesce(max(n), 0) FROM acknowledged")) {
                rs.next();
                survived = rs.getInt(1);
                assertEquals(survived, rs.getInt(2), "recovery kept a prefix of the commits, in commit order");
            }
            assertTrue(survived >= checkpointed, "the crash lost commits from before a checkpoint: " + survived);
        }
        assertTrue(survived < acknowledged, "three immediate stops lost none of the " + acknowledged + " acknowledged commits");
    }

    @Test
    void aReloadableParameterHoldsThroughACrashUntilReset() throws Exception {
        pg.setReloadable("wal_writer_delay", "1000ms");
        awaitSetting("wal_writer_delay", "1s"); // the postmaster applies a reload on its own time
        pg.crash();
        pg.startAgain();
        assertEquals("1s", show("wal_writer_delay"));
        pg.setReloadable("wal_writer_delay", null);
        awaitSetting("wal_writer_delay", "200ms");
    }

    private static void awaitSetting(String parameter, String value) {
        Awaitility.await(parameter + " = " + value).atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50))
                .until(() -> show(parameter).equals(value));
    }

    private static String show(String parameter) throws SQLException {
        try (Connection c = connect(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SHOW " + parameter)) {
            rs.next();
            return rs.getString(1);
        }
    }

    private static Connection connect() throws SQLException {
        return DriverManager.getConnection(pg.jdbcUrl(), LocalPostgres.USER, "");
    }
}
