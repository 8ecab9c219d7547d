package dev.ledgerline.transfers.packaged;

import dev.ledgerline.devstack.LocalPostgres;
import dev.ledgerline.devstack.LocalStack;
import dev.ledgerline.transfers.faults.ProviderServer;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.Issuer;
import dev.ledgerline.transfers.support.Repo;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The migrations apart from the service, the way the manifests ship them (README "Deploying"): {@code ops/roles.sql}
 * makes the roles; the packaged jar runs with the migration Job's own settings, read from the generated manifests,
 * as {@code ledgerline_owner}, migrates and exits; {@code ops/roles.sql} grants on the new tables; the service then
 * runs as {@code ledgerline_service}, accepts a transfer that the provider executes once and that reaches
 * {@code sent}, and that role is refused every way of changing the tables or writing behind their triggers.
 */
class MigrationJobIT {

    private static final String OWNER = "ledgerline_owner";
    private static final String SERVICE = "ledgerline_service";
    private static final String INSUFFICIENT_PRIVILEGE = "42501";

    private static LocalStack stack;
    private static Issuer issuer;
    private static ProviderServer provider;

    @BeforeAll
    static void servers() throws Exception {
        stack = LocalStack.start();
        issuer = Issuer.fresh();
        provider = ProviderServer.start();
    }

    @AfterAll
    static void stop() throws Exception {
        if (provider != null) {
            provider.close();
        }
        if (issuer != null) {
            issuer.close();
        }
        if (stack != null) {
            stack.close();
        }
    }

    @Test
    void theJobMigratesAsTheOwnerAndTheServiceRunsAsARoleThatCannotChangeItsTables() throws Exception {
        runRolesFile();

        // the Job: the ConfigMap's settings, its own Secret's credentials, and the literal settings of its container
        Map<String, String> job = PackagedService.env(stack, PackagedJar.freePort(), issuer.publicKey());
        // README "Deploying" keeps these in the service's Secret, which the Job does not read
        job.remove("LEDGERLINE_IDEMPOTENCY_REFERENCE_SECRET");
        job.remove("QUARKUS_REDIS_HOSTS");
        job.putAll(Manifests.literalEnv(Manifests.migrationContainer()));
        job.put("QUARKUS_DATASOURCE_USERNAME", OWNER);
        Path jobLog = Files.createTempFile("migration-job", ".log");
        Process migration = PackagedService.launch(job, jobLog);
        assertTrue(migration.waitFor(120, TimeUnit.SECONDS), "the Job's process exits by itself; see " + jobLog);
        assertEquals(0, migration.exitValue(), "the Job succeeds: " + Files.readString(jobLog));

        List<Map<String, Object>> applied = superuser("SELECT version, installed_by, success FROM flyway_schema_history");
        assertTrue(applied.size() > 10, "the release's migrations were applied: " + applied);
        applied.forEach(row -> {
            assertEquals(OWNER, row.get("installed_by"), row.toString());
            assertEquals(true, row.get("success"), row.toString());
        });
        List<Map<String, Object>> foreign = superuser("SELECT tablename, tableowner FROM pg_tables"
                + " WHERE schemaname = 'public' AND tableowner <> '" + OWNER + "'");
        assertTrue(foreign.isEmpty(), "every table belongs to the owner: " + foreign);

        runRolesFile();

        Map<String, String> env = PackagedService.env(stack, PackagedJar.freePort(), issuer.publicKey());
        env.put("QUARKUS_REST_CLIENT_PROVIDER_URL", provider.url());
        env.put("QUARKUS_DATASOURCE_USERNAME", SERVICE);
        Path serviceLog = Files.createTempFile("service-role", ".log");
        try (PackagedService service = PackagedService.start(env, serviceLog)) {
            String token = issuer.writer("least-privilege-" + UUID.randomUUID());
            String id = given().port(service.port).auth().oauth2(token).contentType("application/json")
                    .header("Idempotency-Key", UUID.randomUUID().toString())
                    .body("{\"amount\": 5, \"currency\": \"EUR\", \"destination\": {\"iban\": \"DE89370400440532013000\", \"name\": \"Ada\"}}")
                    .post("/v1/transfers").then().statusCode(201).extract().path("id");
            Awaitility.await("the transfer accepted by the service's role reaches sent").atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> "sent".equals(given().port(service.port).auth().oauth2(token)
                            .get("/v1/transfers/" + id).then().statusCode(200).extract().path("status")));
            String reference = given().port(service.port).auth().oauth2(token).get("/v1/transfers/" + id)
                    .then().extract().path("providerReference");
            assertEquals(1, provider.ledger().executions(reference), "executed once at the provider");
            assertEquals(List.of(Map.of("usename", SERVICE)), superuser("SELECT DISTINCT usename FROM pg_stat_activity"
                    + " WHERE usename LIKE 'ledgerline%'"), "the running service is connected as its role, and only it");

            for (String sql : List.of(
                    "ALTER TABLE transfers ADD COLUMN note text",
                    "ALTER TABLE transfers DISABLE TRIGGER ALL",
                    "ALTER TABLE transfer_events DISABLE TRIGGER transfer_events_append_only",
                    "SET session_replication_role = replica",
                    "DROP TRIGGER transfers_payment_fixed ON transfers",
                    "DELETE FROM transfers WHERE id = '" + id + "'",
                    "DELETE FROM transfer_events WHERE transfer_id = '" + id + "'",
                    "TRUNCATE transfers",
                    "CREATE TABLE shadow (id uuid)")) {
                SQLException refused = assertThrows(SQLException.class, () -> execute(SERVICE, sql), SERVICE + " may not: " + sql);
                assertEquals(INSUFFICIENT_PRIVILEGE, refused.getSQLState(), sql + " -> " + refused.getMessage());
            }
            // what the role may write, the triggers still police: a sent transfer does not go back
            SQLException back = assertThrows(SQLException.class, () -> execute(SERVICE, "UPDATE transfers SET status = 'pending',"
                    + " version = version + 1, feed_xid = greatest(feed_xid, pg_current_xact_id()) WHERE id = '" + id + "'"));
            assertEquals("23514", back.getSQLState(), back.getMessage());
            assertEquals("sent", superuser("SELECT status FROM transfers WHERE id = '" + id + "'").get(0).get("status"));
            assertFalse(superuser("SELECT 1 FROM transfer_events WHERE transfer_id = '" + id + "'").isEmpty());
        }
        Files.deleteIfExists(jobLog);
        Files.deleteIfExists(serviceLog);
    }

    /** {@code psql -f ops/roles.sql} as the superuser, as its header says. */
    private static void runRolesFile() throws Exception {
        String script = Files.readString(Repo.file("ops/roles.sql"));
        try (Connection c = connect(LocalPostgres.USER); Statement st = c.createStatement()) {
            st.execute(script);
        }
    }

    private static List<Map<String, Object>> superuser(String sql) throws SQLException {
        try (Connection c = connect(LocalPostgres.USER)) {
            return Db.query(c, sql);
        }
    }

    private static void execute(String role, String sql) throws SQLException {
        try (Connection c = connect(role); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    /** The local server trusts loopback connections: no password. Simple protocol, as psql sends a script. */
    private static Connection connect(String role) throws SQLException {
        Properties props = new Properties();
        props.setProperty("user", role);
        props.setProperty("password", "");
        props.setProperty("preferQueryMode", "simple");
        return DriverManager.getConnection(stack.postgres().jdbcUrl(), props);
    }
}
