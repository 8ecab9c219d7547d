package dev.ledgerline.transfers.support;

import dev.ledgerline.devstack.LocalPostgres;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Direct SQL against the tests' PostgreSQL, to assert on rows as they really are. */
public final class Db {

    private Db() {
    }

    public static List<Map<String, Object>> query(String sql, Object... params) {
        try (Connection c = connect()) {
            return query(c, sql, params);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The rows of {@code sql} on a connection of the caller's (another role, another server), column label → value. */
    public static List<Map<String, Object>> query(Connection c, String sql, Object... params) throws SQLException {
        try (PreparedStatement st = c.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                st.setObject(i + 1, params[i]);
            }
            try (ResultSet rs = st.executeQuery()) {
                return rows(rs);
            }
        }
    }

    /** Every row of {@code rs}, column label → value. */
    public static List<Map<String, Object>> rows(ResultSet rs) throws SQLException {
        List<Map<String, Object>> rows = new ArrayList<>();
        while (rs.next()) {
            Map<String, Object> row = new LinkedHashMap<>();
            for (int col = 1; col <= rs.getMetaData().getColumnCount(); col++) {
                row.put(rs.getMetaData().getColumnLabel(col), rs.getObject(col));
            }
            rows.add(row);
        }
        return rows;
    }

    public static long count(String sql, Object... params) {
        return ((Number) query(sql, params).get(0).values().iterator().next()).longValue();
    }

    public static int update(String sql, Object... params) {
        try (Connection c = connect(); PreparedStatement st = c.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                st.setObject(i + 1, params[i]);
            }
            return st.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Runs the statements in one transaction with the triggers off ({@code session_replication_role = replica}): the
     * rows as a database that lost commits, or an operator's hand, would leave them, without the service's rules.
     */
    public static void behindTheTriggers(String... statements) {
        try (Connection c = connect()) {
            c.setAutoCommit(false);
            try (var st = c.createStatement()) {
                st.execute("SET LOCAL session_replication_role = replica");
                for (String sql : statements) {
                    st.execute(sql);
                }
            }
            c.commit();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Moves a transfer back to {@code at} (an SQL {@code timestamptz} expression) behind the triggers, as if it had been
     * created then and last changed at {@code updatedAt}; {@code more} runs in the same transaction, {@code %s} in it
     * standing for the id (to move its key's time, or its events'). A transfer's id carries its creation time (V18), and
     * statements addressed by id read only the partitions from that time on: the transfer gets the id it would have had
     * then, in every table that names it. Returns that id.
     */
    public static String createdBack(String id, String at, String updatedAt, String... more) {
        String moved = (String) query("SELECT ledgerline_transfer_id(?::uuid, " + at + ")::text AS id", id).get(0).get("id");
        List<String> statements = new ArrayList<>(List.of(
                "UPDATE transfers SET id = '" + moved + "', created_at = " + at + ", updated_at = " + updatedAt
                        + " WHERE id = '" + id + "'",
                "UPDATE transfer_keys SET transfer_id = '" + moved + "' WHERE transfer_id = '" + id + "'",
                "UPDATE transfer_events SET transfer_id = '" + moved + "' WHERE transfer_id = '" + id + "'",
                "UPDATE ledger_entries SET transfer_id = '" + moved + "' WHERE transfer_id = '" + id + "'"));
        for (String sql : more) {
            statements.add(sql.formatted(moved));
        }
        behindTheTriggers(statements.toArray(String[]::new));
        return moved;
    }

    /** A connection of its own, for a test that holds a transaction open. */
    public static Connection connect() throws SQLException {
        LocalPostgres pg = TestStack.current().postgres();
        return DriverManager.getConnection(pg.jdbcUrl(), LocalPostgres.USER, "");
    }
}
