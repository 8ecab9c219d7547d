package dev.ledgerline.transfers.support;

import dev.ledgerline.transfers.local.LocalPostgres;

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
        try (Connection c = connect(); PreparedStatement st = c.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                st.setObject(i + 1, params[i]);
            }
            try (ResultSet rs = st.executeQuery()) {
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
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
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

    private static Connection connect() throws SQLException {
        LocalPostgres pg = TestStack.current().postgres();
        return DriverManager.getConnection(pg.jdbcUrl(), LocalPostgres.USER, "");
    }
}
