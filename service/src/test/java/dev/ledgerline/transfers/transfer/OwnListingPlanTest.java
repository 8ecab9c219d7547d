package dev.ledgerline.transfers.transfer;

import dev.ledgerline.transfers.support.OwnPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The caller's own listing ({@link TransferSql#LIST_OWN}) reads {@code transfers_by_owner} (V9) in the listing's
 * order from the cursor on: for a principal with many transfers an index scan in the listing's order, no sort; for one
 * with few, at least the index and never a scan of other principals' rows — for the plan PostgreSQL makes for the
 * first executions of the statement (custom) and for the one it may switch to after them (generic), since the service
 * keeps the statement prepared. Runs the migrations on a PostgreSQL of its own, filled with 40,000 transfers: half of
 * them of one busy principal, the rest of 400 others.
 */
class OwnListingPlanTest {

    /** A scan of the own listing's index, on the table or on one of its partitions. */
    private static final String BY_OWNER =
            "(?s).*(on|using) transfers_\\w*(by_owner|user_id_created_at_id_idx)\\b.*";

    /** The newest row's time: noon (UTC) of the day the migrations' first partition covers. */
    private static final String NOON = "(date_trunc('day', now(), 'UTC') + interval '12 hours')";

    private static OwnPostgres db;

    @BeforeAll
    static void fill() throws Exception {
        db = OwnPostgres.start().migrate(OwnPostgres.SUPERUSER);
        try (Connection c = db.connect(OwnPostgres.SUPERUSER); Statement st = c.createStatement()) {
            // the rows reach 40,000 s (11 h 7 min) back from noon (UTC) today: all in the day the migrations' first
            // partition covers, whatever the hour. Rows reaching back from now() crossed into yesterday before 11:07, and a
            // day holding a few of them is rightly read by a Seq Scan of its few pages, which says nothing of the index
            st.execute("""
                    INSERT INTO transfers (id, user_id, idempotency_key, request_fingerprint, amount, currency, destination_iban,
                                           destination_name, provider_reference, status, version, last_actor, created_at, updated_at)
                    SELECT gen_random_uuid(), CASE WHEN i % 2 = 0 THEN 'busy' ELSE 'owner-' || (i % 400) END, 'key-' || i, 'fp', 10, 'EUR', 'DE89370400440532013000', 'Ada',
                           'll_' || md5(i::text), CASE WHEN i % 10 = 0 THEN 'failed' ELSE 'sent' END, 0, 'test',
                           {noon} - i * interval '1 second', {noon} - i * interval '1 second'
                      FROM generate_series(1, 40000) AS i""".replace("{noon}", NOON));
            st.execute("ANALYZE transfers");
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (db != null) {
            db.close();
        }
    }

    @ParameterizedTest(name = "{0}, {1}, status {2}, {3}")
    @CsvSource({
            "busy, force_custom_plan, any, first page",
            "busy, force_generic_plan, any, first page",
            "busy, force_custom_plan, failed, first page",
            "busy, force_generic_plan, failed, first page",
            "busy, force_custom_plan, any, after a cursor",
            "busy, force_generic_plan, any, after a cursor",
            "owner-7, force_custom_plan, any, first page",
            "owner-7, force_generic_plan, any, after a cursor",
            "owner-7, force_custom_plan, failed, after a cursor"})
    void theOwnListingReadsItsIndexFromTheCursorOn(String owner, String planCacheMode, String status, String page) throws Exception {
        String cursor = page.equals("first page")
                ? "'9999-12-31T23:59:59Z', 'ffffffff-ffff-ffff-ffff-ffffffffffff'"
                : NOON + " - interval '5 hours', '80000000-0000-0000-0000-000000000000'";
        List<String> plan = new ArrayList<>();
        try (Connection c = db.connect(OwnPostgres.SUPERUSER); Statement st = c.createStatement()) {
            st.execute("SET plan_cache_mode = " + planCacheMode);
            st.execute("PREPARE own (text, text, timestamptz, uuid, int) AS " + TransferSql.LIST_OWN);
            try (ResultSet rs = st.executeQuery("EXPLAIN EXECUTE own ('" + owner + "', "
                    + (status.equals("any") ? "NULL" : "'" + status + "'") + ", " + cursor + ", 51)")) {
                while (rs.next()) {
                    plan.add(rs.getString(1));
                }
            }
        }
        String text = String.join("\n", plan);
        // the cursor is where the scan starts, not a filter over the principal's earlier rows
        assertTrue(text.matches("(?s).*Index Cond: \\(\\(user_id = [^)]+\\) AND \\(ROW\\(created_at, id\\) < ROW\\(.*"), text);
        // transfers is partitioned by day (V17): each partition scans its part of transfers_by_owner (named after the
        // partition's index: <partition>_by_owner, or PostgreSQL's <partition>_user_id_created_at_id_idx)
        assertTrue(text.matches(BY_OWNER), text);
        // no scan of other principals' rows; the default partition, empty (a time no partition covered), may be read
        // by a scan of its no pages
        assertFalse(text.replace("Seq Scan on transfers_default ", "").contains("Seq Scan"), text);
        if (text.contains("Seq Scan on transfers_default ")) {
            try (Connection c = db.connect(OwnPostgres.SUPERUSER); Statement st = c.createStatement();
                 ResultSet rs = st.executeQuery("SELECT count(*) FROM transfers_default")) {
                rs.next();
                assertEquals(0, rs.getLong(1), "the default partition is empty:\n" + text);
            }
        }
        if (owner.equals("busy")) {
            assertTrue(text.matches("(?s).*Index Scan using transfers_\\w*(by_owner|user_id_created_at_id_idx) on transfers_\\w+.*"), text);
            assertFalse(text.matches("(?s).*(^|->\\s+)(Incremental )?Sort\\s+\\(.*"), "the index gives the order (a Merge Append"
                    + " of the partitions' scans at most, no Sort):\n" + text);
        }
    }
}
