package dev.ledgerline.transfers.transfer;

import dev.ledgerline.transfers.support.OwnPostgres;
import dev.ledgerline.transfers.support.Repo;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.Statement;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The benchmarks' database limit is measured with {@code bench/transfer.pgbench}: it must be the service's SQL of this
 * build ({@link PgbenchScript}), and it must do on a migrated database what a transfer does there — insert and hold,
 * claim, fence to {@code sent} and post — or the ratio the benchmarks report is against some other workload.
 */
class PgbenchScriptTest {

    /** pgbench's variables in a command: {@code :name}, not a {@code ::} cast. */
    private static final Pattern VARIABLE = Pattern.compile("(?<!:):([a-z_][a-z0-9_]*)");

    private static OwnPostgres db;

    @BeforeAll
    static void start() {
        db = OwnPostgres.start().migrate(OwnPostgres.SUPERUSER);
    }

    @AfterAll
    static void stop() throws Exception {
        db.close();
    }

    @Test
    void theCommittedScriptIsTheServicesSqlOfThisBuild() throws Exception {
        Path committed = Repo.file("bench/transfer.pgbench");
        String script = PgbenchScript.render(PgbenchScript.Settings.prod());
        if (Boolean.getBoolean("pgbench.write")) {
            Files.writeString(committed, script);
        }
        assertEquals(script, Files.readString(committed), "bench/transfer.pgbench is not this build's TransferSql: "
                + "./mvnw test -pl service -Dtest=PgbenchScriptTest -Dpgbench.write=true writes it");
    }

    @Test
    void theSettingsAreTheProdProfiles() {
        PgbenchScript.Settings s = PgbenchScript.Settings.prod();
        assertEquals(new PgbenchScript.Settings(2_000, 20_000, 5_000, 4_000, 86_400_000L - 600_000L - 5_000L), s);
    }

    @Test
    void eachRunInsertsHoldsAndClaimsThenFencesToSentAndPostsItsTransfers() throws Exception {
        String script = PgbenchScript.render(PgbenchScript.Settings.prod());
        List<PgbenchScript.Step> steps = PgbenchScript.steps(script);
        assertEquals(PgbenchScript.BATCH + 1, steps.size(), "a claimed insert per transfer, then one fence");
        int runs = 3;
        try (Connection c = db.connect(OwnPostgres.SUPERUSER); Statement st = c.createStatement()) {
            for (int client = 0; client < 2; client++) {
                for (int run = 0; run < runs; run++) {
                    Map<String, String> vars = new HashMap<>();
                    vars.put("client_id", Integer.toString(client));
                    for (int i = 1; i <= PgbenchScript.BATCH; i++) {
                        vars.put("k" + i, Long.toString(ThreadLocalRandom.current().nextLong(1, 1_000_000_000_000_000L)));
                    }
                    for (PgbenchScript.Step step : steps) {
                        int rows = 0;
                        try (ResultSet rs = st.executeQuery(substitute(step.sql(), vars))) {
                            ResultSetMetaData meta = rs.getMetaData();
                            while (rs.next()) {
                                rows++;
                                for (int col = 1; step.gset() != null && col <= meta.getColumnCount(); col++) {
                                    vars.put(step.gset() + meta.getColumnLabel(col), rs.getString(col));
                                }
                            }
                        }
                        // pgbench's \gset fails a run on an answer of no row: each claimed insert answers one
                        assertEquals(step.gset() == null ? PgbenchScript.BATCH : 1, rows, step.sql());
                    }
                }
            }
            int transfers = 2 * runs * PgbenchScript.BATCH;
            assertEquals(transfers, count(st, "SELECT count(*) FROM transfers WHERE status = 'sent' AND version = 2 AND holds_funds"));
            assertEquals(3L * transfers, count(st, "SELECT count(*) FROM transfer_events"), "pending, processing, sent");
            for (int client = 0; client < 2; client++) {
                String principal = "'bench-" + client + "'";
                long spent = 1250L * runs * PgbenchScript.BATCH;
                assertEquals(PgbenchScript.OPENING_BALANCE - spent,
                        count(st, "SELECT posted FROM accounts WHERE principal = " + principal), "posted");
                assertEquals(0, count(st, "SELECT held FROM accounts WHERE principal = " + principal), "no hold left");
                assertEquals(2L * runs * PgbenchScript.BATCH, count(st, "SELECT count(*) FROM ledger_entries WHERE principal = "
                        + principal + " AND kind IN ('hold', 'post')"), "a hold and a post per transfer");
            }
        }
    }

    /** What pgbench sends for a command: each variable's value in place (here as a literal; pgbench binds it). */
    private static String substitute(String sql, Map<String, String> vars) {
        Matcher m = VARIABLE.matcher(sql);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String value = vars.get(m.group(1));
            assertTrue(value != null, "the script uses :" + m.group(1) + " before setting it");
            m.appendReplacement(out, Matcher.quoteReplacement("'" + value.replace("'", "''") + "'"));
        }
        m.appendTail(out);
        return out.toString();
    }

    private static long count(Statement st, String sql) throws Exception {
        try (ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
