package dev.ledgerline.transfers.transfer;

import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.events.EventFeed;
import dev.ledgerline.transfers.ops.SchemaReadinessCheck;
import dev.ledgerline.transfers.support.Repo;
import dev.ledgerline.transfers.webhooks.WebhookRepository;
import dev.ledgerline.transfers.support.OwnPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code ops/roles.sql} over the service's migrations, applied the way its header says: the service's role reads and
 * writes rows, runs every statement of the service, and can do nothing that writes behind the triggers (alter a
 * table, disable a trigger, set {@code session_replication_role}); the operator's role cannot touch a table and
 * resumes a parked transfer only through {@code ledgerline_resume_parked}, which writes a new version and its event.
 */
class DatabaseRolesTest {

    private static final Path ROLES = Repo.file("ops/roles.sql");
    private static final String OWNER = "ledgerline_owner";
    private static final String SERVICE = "ledgerline_service";
    /** A person's login in the operator group, as the file's header says to create one. */
    private static final String OPERATOR = "olga";
    private static final String INSUFFICIENT_PRIVILEGE = "42501";

    private static OwnPostgres db;

    @BeforeAll
    static void deploy() throws Exception {
        db = OwnPostgres.start();
        db.runScript(ROLES);
        db.migrate(OWNER);
        db.runScript(ROLES);
        execute(OwnPostgres.SUPERUSER, "CREATE ROLE " + OPERATOR + " LOGIN IN ROLE ledgerline_operator");
    }

    @AfterAll
    static void stop() throws Exception {
        if (db != null) {
            db.close();
        }
    }

    // ---- the service's role ----

    @Test
    void theServiceRoleCannotDisableATriggerOrSwitchThemOffForItsSession() throws Exception {
        for (String sql : List.of(
                "ALTER TABLE transfers DISABLE TRIGGER transfers_payment_fixed",
                "ALTER TABLE transfers DISABLE TRIGGER transfers_guard",
                "ALTER TABLE transfers DISABLE TRIGGER ALL",
                "ALTER TABLE transfer_events DISABLE TRIGGER transfer_events_append_only",
                "SET session_replication_role = replica",
                "SELECT set_config('session_replication_role', 'replica', false)",
                "DROP TRIGGER transfers_payment_fixed ON transfers",
                "ALTER TABLE transfers ADD COLUMN note text",
                "CREATE TABLE shadow (id uuid)")) {
            refused(SERVICE, sql);
        }
        assertEquals("origin", query(SERVICE, "SHOW session_replication_role").get(0).get("session_replication_role"));
        assertTriggersEnabled();
    }

    @Test
    void theServiceRoleCannotDeleteTruncateOrRewriteHistory() throws Exception {
        UUID id = insertAs(SERVICE, "pending", "0");
        execute(SERVICE, "INSERT INTO transfer_events (transfer_id, version, from_status, to_status, actor, reason, feed_xid)"
                + " VALUES ('" + id + "', 0, NULL, 'pending', 'w1', 'accepted', pg_current_xact_id())");
        for (String sql : List.of(
                "DELETE FROM transfers WHERE id = '" + id + "'",
                "TRUNCATE transfers",
                "UPDATE transfer_events SET actor = 'someone else' WHERE transfer_id = '" + id + "'",
                "DELETE FROM transfer_events WHERE transfer_id = '" + id + "'",
                "TRUNCATE transfer_events",
                "UPDATE flyway_schema_history SET success = true")) {
            refused(SERVICE, sql);
        }
        assertEquals(1, query(OwnPostgres.SUPERUSER, "SELECT 1 FROM transfer_events WHERE transfer_id = '" + id + "'").size());
    }

    /**
     * Every statement the service sends, planned as the service's role: PostgreSQL checks a statement's privileges when
     * it starts executing it, which EXPLAIN does too, so a table the role may not read or write fails here without
     * values for the statement's parameters.
     */
    @Test
    void theServiceRoleMayRunEveryStatementOfTheService() throws Exception {
        Map<String, String> statements = new LinkedHashMap<>();
        statements.putAll(statements(TransferSql.class));
        statements.putAll(statements(SchemaReadinessCheck.class));
        statements.putAll(statements(WebhookRepository.class));
        statements.putAll(statements(EventFeed.class));
        statements.putAll(statements(Class.forName("dev.ledgerline.transfers.account.AccountSql")));
        assertTrue(statements.containsKey("TransferSql.CLAIM") && statements.containsKey("SchemaReadinessCheck.SCHEMA"),
                "found the statements: " + statements.keySet());
        for (Map.Entry<String, String> statement : statements.entrySet()) {
            try {
                execute(SERVICE, "EXPLAIN (GENERIC_PLAN) " + statement.getValue());
            } catch (SQLException e) {
                throw new AssertionError(statement.getKey() + " as " + SERVICE + ": " + e.getMessage(), e);
            }
        }
        // the check has teeth: a statement the role may not run fails the same way
        refused(SERVICE, "EXPLAIN (GENERIC_PLAN) DELETE FROM transfers WHERE id = $1");

        // and the writes themselves, as the repository shapes them: insert, a transition, its event, the notification
        UUID id = insertAs(SERVICE, "pending", "0");
        assertEquals(1, update(SERVICE, "WITH w AS (UPDATE transfers SET previous_status = status, status = 'processing',"
                + " version = version + 1, feed_xid = greatest(feed_xid, pg_current_xact_id()), claimed_by = 'w1', last_actor = 'w1', last_reason = 'claimed' WHERE id = ?"
                + " RETURNING id, version, status, previous_status, last_actor, last_reason, feed_xid)"
                + " INSERT INTO transfer_events (transfer_id, version, from_status, to_status, actor, reason, feed_xid)"
                + " SELECT id, version, previous_status, status, last_actor, last_reason, feed_xid FROM w", id));
        execute(SERVICE, "LISTEN transfer_changes");
        assertEquals("processing", row(id).get("status"));
    }

    @Test
    void theServiceRoleMakesAndDetachesEventPartitionsOnlyThroughTheOwnersFunctions() throws Exception {
        String later = "date_trunc('day', now(), 'UTC') + interval '40 days'";
        assertEquals(2, query(SERVICE, "SELECT ledgerline_create_event_partitions(" + later + ", " + later + " + interval '2 days',"
                + " interval '1 day', 10, interval '1 second') AS n").get(0).get("n"), "two days, one partition each");
        String partition = (String) query(OwnPostgres.SUPERUSER, "SELECT name FROM ledgerline_event_partitions()"
                + " WHERE from_at = " + later).get(0).get("name");
        for (String sql : List.of(
                "ALTER TABLE transfer_events DETACH PARTITION " + partition,
                "DROP TABLE " + partition,
                "DELETE FROM " + partition,
                "CREATE TABLE transfer_events_shadow PARTITION OF transfer_events FOR VALUES FROM ('2001-01-01') TO ('2001-01-02')",
                "SELECT * FROM ledgerline_event_partitions()")) {
            refused(SERVICE, sql);
        }
        // whatever the service passes, history of the last hour stays (and partitions ahead, with it)
        long before = query(OwnPostgres.SUPERUSER, "SELECT 1 FROM ledgerline_event_partitions()").size();
        assertTrue(query(SERVICE, "SELECT * FROM ledgerline_detach_event_partitions(now() + interval '1000 days', 100, false,"
                + " interval '1 second')").isEmpty());
        assertEquals(before, query(OwnPostgres.SUPERUSER, "SELECT 1 FROM ledgerline_event_partitions()").size());
        // a partition made by the function is append-only like its parent, for every role but through DDL
        refused(OwnPostgres.SUPERUSER, "DELETE FROM " + partition, "23001");
        refused(OwnPostgres.SUPERUSER, "TRUNCATE " + partition, "23001");
    }

    @Test
    void theServiceRoleMakesAndDetachesTransferPartitionsOnlyThroughTheOwnersFunctions() throws Exception {
        String later = "date_trunc('day', now(), 'UTC') + interval '40 days'";
        assertEquals(2, query(SERVICE, "SELECT ledgerline_create_transfer_partitions(" + later + ", " + later + " + interval '2 days',"
                + " interval '1 day', 10, interval '1 second') AS n").get(0).get("n"), "two days, one partition each");
        String partition = (String) query(OwnPostgres.SUPERUSER, "SELECT name FROM ledgerline_partitions_of('transfers')"
                + " WHERE from_at = " + later).get(0).get("name");
        for (String sql : List.of(
                "ALTER TABLE transfers DETACH PARTITION " + partition,
                "ALTER TABLE transfers DETACH PARTITION transfers_initial",
                "DROP TABLE " + partition,
                "DELETE FROM " + partition,
                "DELETE FROM transfers_initial",
                "TRUNCATE transfers_initial",
                "CREATE TABLE transfers_shadow PARTITION OF transfers FOR VALUES FROM ('2001-01-01') TO ('2001-01-02')",
                "SELECT * FROM ledgerline_partitions_of('transfers')")) {
            refused(SERVICE, sql);
        }
        // whatever the service passes, nothing of the last day leaves (and partitions ahead, with it)
        long before = query(OwnPostgres.SUPERUSER, "SELECT 1 FROM ledgerline_partitions_of('transfers')").size();
        assertTrue(query(SERVICE, "SELECT * FROM ledgerline_detach_transfer_partitions(now() + interval '1000 days', 100, false,"
                + " interval '1 second')").isEmpty());
        assertEquals(before, query(OwnPostgres.SUPERUSER, "SELECT 1 FROM ledgerline_partitions_of('transfers')").size());
        // a partition made by the function keeps its rows like its parent, for every role but through DDL
        refused(OwnPostgres.SUPERUSER, "DELETE FROM " + partition, "23001");
        refused(OwnPostgres.SUPERUSER, "TRUNCATE " + partition, "23001");
        refused(OwnPostgres.SUPERUSER, "DELETE FROM transfers", "23001");
    }

    @Test
    void theServiceRoleWritesKeysButRemovesThemOnlyThroughTheOwnersFunctionAndNeverOneOfTheLastDay() throws Exception {
        UUID id = UUID.randomUUID();
        update(SERVICE, "INSERT INTO transfer_keys (user_id, idempotency_key, provider_reference, transfer_id) VALUES ('alice', ?, ?, ?)",
                "key-" + id, "ll_" + id.toString().replace("-", ""), id);
        for (String sql : List.of(
                "DELETE FROM transfer_keys WHERE transfer_id = '" + id + "'",
                "UPDATE transfer_keys SET created_at = now() - interval '1000 days' WHERE transfer_id = '" + id + "'",
                "TRUNCATE transfer_keys",
                "DROP TABLE transfer_keys",
                "ALTER TABLE transfer_keys DROP CONSTRAINT transfer_keys_pkey")) {
            refused(SERVICE, sql);
        }
        // whatever the service passes, a key of the last day stays (its transfer is gone, so only the floor keeps it)
        assertEquals(0, query(SERVICE, "SELECT ledgerline_expire_transfer_keys(now() + interval '1000 days', 100) AS n").get(0).get("n"));
        assertEquals(1, query(OwnPostgres.SUPERUSER, "SELECT 1 FROM transfer_keys WHERE transfer_id = '" + id + "'").size());
        refused(OPERATOR, "SELECT ledgerline_expire_transfer_keys(now(), 100)");
        // a key is never rewritten, by any role
        refused(OwnPostgres.SUPERUSER, "UPDATE transfer_keys SET transfer_id = gen_random_uuid() WHERE transfer_id = '" + id + "'", "23001");
    }

    @Test
    void theFloorsUnderTheRetentionAreTheOwnersToLowerAndNoOneElses() throws Exception {
        for (String role : List.of(SERVICE, OPERATOR)) {
            refused(role, "SELECT * FROM retention_floors");
            refused(role, "UPDATE retention_floors SET keys = interval '1 second'");
            refused(role, "SELECT ledgerline_retention_floor('keys')");
        }
        refused(OWNER, "UPDATE retention_floors SET keys = interval '0 seconds'", "23514");
        UUID id = UUID.randomUUID();
        update(SERVICE, "INSERT INTO transfer_keys (user_id, idempotency_key, provider_reference, transfer_id) VALUES ('bob', ?, ?, ?)",
                "key-" + id, "ll_" + id.toString().replace("-", ""), id);
        String expire = "SELECT ledgerline_expire_transfer_keys(now() + interval '1000 days', 100) AS n";
        String left = "SELECT 1 FROM transfer_keys WHERE transfer_id = '" + id + "'";
        assertEquals(0, query(SERVICE, expire).get(0).get("n"), "the default floor keeps a key of the last day");
        try {
            execute(OWNER, "UPDATE retention_floors SET keys = interval '1 second'");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (!query(OwnPostgres.SUPERUSER, left).isEmpty() && System.nanoTime() < deadline) {
                query(SERVICE, expire);
                Thread.sleep(200);
            }
            assertTrue(query(OwnPostgres.SUPERUSER, left).isEmpty(), "with the owner's floor of a second, the key leaves");
        } finally {
            execute(OWNER, "UPDATE retention_floors SET keys = DEFAULT");
        }
        assertEquals("1 day", query(OwnPostgres.SUPERUSER, "SELECT keys::text FROM retention_floors").get(0).get("keys"));
    }

    @Test
    void theServicesFlywayRunAtStartOnlyReadsAndRefusesToApplyAMigration(@TempDir Path extra) throws Exception {
        assertEquals(0, db.flyway(SERVICE).migrate().migrationsExecuted, "nothing pending: the service starts");

        Files.writeString(extra.resolve("V999__pending.sql"), "ALTER TABLE transfers ADD COLUMN pending_note text;");
        var pending = org.flywaydb.core.Flyway.configure().dataSource(db.jdbcUrl(), SERVICE, "")
                .locations("classpath:db/migration", "filesystem:" + extra).load();
        assertThrows(org.flywaydb.core.api.FlywayException.class, pending::migrate,
                "a release whose migrations were not applied does not start, and does not migrate");
        assertTrue(query(OwnPostgres.SUPERUSER, "SELECT 1 FROM information_schema.columns"
                + " WHERE table_name = 'transfers' AND column_name = 'pending_note'").isEmpty());
    }

    @Test
    void noLedgerlineRoleIsASuperuserOrAMemberOfTheOwner() throws Exception {
        List<Map<String, Object>> roles = query(OwnPostgres.SUPERUSER, "SELECT rolname, rolsuper, rolbypassrls,"
                + " pg_has_role(rolname, 'ledgerline_owner', 'MEMBER') AS owner FROM pg_roles"
                + " WHERE rolname IN ('ledgerline_owner', 'ledgerline_service', 'ledgerline_operator', 'olga') ORDER BY rolname");
        assertEquals(4, roles.size());
        for (Map<String, Object> role : roles) {
            assertEquals(false, role.get("rolsuper"), role.toString());
            assertEquals(false, role.get("rolbypassrls"), role.toString());
            assertEquals(role.get("rolname").equals(OWNER), role.get("owner"), role.toString());
        }
        // not even the owner, whose credentials only the migrations use, can switch the triggers off for a session
        refused(OWNER, "SET session_replication_role = replica");
    }

    // ---- the operator's role ----

    @Test
    void anOperatorCannotUpdateARowButResumesAParkedTransferThroughTheFunction() throws Exception {
        UUID id = insertParked();
        refused(OPERATOR, "UPDATE transfers SET next_attempt_at = now(), refused_sends = 0 WHERE id = '" + id + "'");
        refused(OPERATOR, "SELECT * FROM transfers WHERE id = '" + id + "'");
        refused(OPERATOR, "INSERT INTO transfer_events (transfer_id, version, to_status, actor) VALUES ('" + id
                + "', 9, 'sent', 'olga')");
        assertEquals(3L, row(id).get("version"));

        List<Map<String, Object>> answer = query(OPERATOR,
                "SELECT ledgerline_resume_parked('" + id + "', 'Olga Ops', 'provider credentials rotated') AS version");
        assertEquals(4L, answer.get(0).get("version"), "the new version");

        Map<String, Object> row = row(id);
        assertEquals("reconciling", row.get("status"), "the reconciler looks it up first");
        assertEquals(4L, row.get("version"));
        assertEquals(0, row.get("refused_sends"));
        assertEquals(true, row.get("due"), "due again: not parked at 'infinity'");
        List<Map<String, Object>> events = query(OwnPostgres.SUPERUSER, "SELECT version, from_status, to_status, actor, reason"
                + " FROM transfer_events WHERE transfer_id = '" + id + "' ORDER BY version");
        assertEquals(1, events.size());
        Map<String, Object> resumed = events.get(0);
        assertEquals(4L, resumed.get("version"));
        assertEquals("reconciling", resumed.get("from_status"));
        assertEquals("reconciling", resumed.get("to_status"));
        assertEquals("Olga Ops", resumed.get("actor"));
        assertEquals("resumed by an operator: provider credentials rotated (database role olga)", resumed.get("reason"));

        // resumed once: the same call again finds nothing parked and changes nothing
        SQLException twice = refused(OPERATOR, "SELECT ledgerline_resume_parked('" + id + "', 'Olga Ops', 'again')", "P0002");
        assertTrue(twice.getMessage().contains("is not parked"), twice.getMessage());
        assertEquals(4L, row(id).get("version"));
    }

    @Test
    void theFunctionResumesOnlyAParkedTransferForANamedOperatorAndOnlyForOperators() throws Exception {
        UUID pending = insertAs(OwnPostgres.SUPERUSER, "pending", "0");
        refused(OPERATOR, "SELECT ledgerline_resume_parked('" + pending + "', 'Olga Ops', 'why not')", "P0002");
        assertEquals(0L, row(pending).get("version"));

        UUID parked = insertParked();
        refused(OPERATOR, "SELECT ledgerline_resume_parked('" + parked + "', '  ', 'no name')", "22023");
        refused(OPERATOR, "SELECT ledgerline_resume_parked('" + parked + "', 'Olga Ops', NULL)", "22023");
        refused(SERVICE, "SELECT ledgerline_resume_parked('" + parked + "', 'the service', 'not its job')");
        assertEquals(3L, row(parked).get("version"));
        assertEquals(false, row(parked).get("due"));
    }

    // ---- the file itself ----

    @Test
    void theFileRunsAgainAndRefusesATableItDoesNotKnow() throws Exception {
        db.runScript(ROLES);
        execute(OWNER, "CREATE TABLE unlisted (id uuid)");
        try {
            SQLException e = assertThrows(SQLException.class, () -> db.runScript(ROLES));
            assertTrue(e.getMessage().contains("grants nothing on unlisted"), e.getMessage());
        } finally {
            execute(OWNER, "DROP TABLE unlisted");
        }
    }

    // ---- helpers ----

    /** The static SQL statements a class holds (its String constants that are statements, not fragments). */
    private static Map<String, String> statements(Class<?> holder) throws IllegalAccessException {
        Map<String, String> found = new LinkedHashMap<>();
        for (Field field : holder.getDeclaredFields()) {
            if (Modifier.isStatic(field.getModifiers()) && field.getType() == String.class) {
                field.setAccessible(true);
                String sql = ((String) field.get(null)).strip();
                if (sql.matches("(?is)^(SELECT|WITH|INSERT|UPDATE|DELETE)\\b.*")) {
                    found.put(holder.getSimpleName() + "." + field.getName(), sql);
                }
            }
        }
        return found;
    }

    private static void assertTriggersEnabled() throws SQLException {
        List<Map<String, Object>> disabled = query(OwnPostgres.SUPERUSER, "SELECT tgname FROM pg_trigger"
                + " WHERE tgrelid IN ('transfers'::regclass, 'transfer_events'::regclass) AND NOT tgisinternal AND tgenabled <> 'O'");
        assertTrue(disabled.isEmpty(), "every trigger still fires: " + disabled);
    }

    private static UUID insertParked() throws SQLException {
        UUID id = insertAs(OwnPostgres.SUPERUSER, "reconciling", "3");
        execute(OwnPostgres.SUPERUSER, "UPDATE transfers SET next_attempt_at = 'infinity', refused_sends = 2 WHERE id = '" + id + "'");
        return id;
    }

    private static UUID insertAs(String role, String status, String version) throws SQLException {
        UUID id = UUID.randomUUID();
        update(role, "INSERT INTO transfers (id, user_id, idempotency_key, request_fingerprint, amount, currency, destination_iban,"
                        + " destination_name, provider_reference, status, version, last_actor)"
                        + " VALUES (?, 'alice', ?, repeat('a', 64), 1250, 'EUR', 'DE89370400440532013000', 'Ada Lovelace', ?, ?, "
                        + version + ", 'test')",
                id, "key-" + id, "ll_" + id.toString().replace("-", ""), status);
        return id;
    }

    private static Map<String, Object> row(UUID id) throws SQLException {
        return query(OwnPostgres.SUPERUSER, "SELECT status, version, refused_sends, next_attempt_at <= now() AS due"
                + " FROM transfers WHERE id = '" + id + "'").get(0);
    }

    private static SQLException refused(String role, String sql) {
        return refused(role, sql, INSUFFICIENT_PRIVILEGE);
    }

    /** The statement fails with {@code sqlState}: the database's refusal, not a mistake in the test. */
    private static SQLException refused(String role, String sql, String sqlState) {
        SQLException e = assertThrows(SQLException.class, () -> execute(role, sql), () -> role + " may not: " + sql);
        assertEquals(sqlState, e.getSQLState(), () -> role + ": " + sql + " -> " + e.getMessage());
        return e;
    }

    private static void execute(String role, String sql) throws SQLException {
        try (Connection c = db.connect(role); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    private static int update(String role, String sql, Object... params) throws SQLException {
        try (Connection c = db.connect(role); PreparedStatement st = c.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                st.setObject(i + 1, params[i]);
            }
            return st.executeUpdate();
        }
    }

    private static List<Map<String, Object>> query(String role, String sql) throws SQLException {
        try (Connection c = db.connect(role); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            return Db.rows(rs);
        }
    }
}
