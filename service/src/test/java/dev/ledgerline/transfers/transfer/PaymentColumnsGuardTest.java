package dev.ledgerline.transfers.transfer;

import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.OwnPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The database refuses, for every writer, an edit of what a transfer pays, to whom and under which keys, on a row
 * in any status, and any edit of a transfer's history. A reconciling row is resent under its reference: an edited
 * IBAN or amount would go out under the same provider idempotency key. Runs the migrations on a PostgreSQL of its
 * own and writes SQL as an operator in psql would (superuser: privileges are {@code DatabaseRolesTest}'s subject).
 */
class PaymentColumnsGuardTest {

    private static final String IBAN = "DE89370400440532013000";
    private static final List<String> STATUSES = List.of("pending", "processing", "reconciling", "sent", "failed");

    private static OwnPostgres db;

    @BeforeAll
    static void migrate() {
        db = OwnPostgres.start().migrate(OwnPostgres.SUPERUSER);
    }

    @AfterAll
    static void stop() throws Exception {
        if (db != null) {
            db.close();
        }
    }

    /** Each column that defines the payment, and an edit of it. */
    static Stream<Arguments> paymentColumns() {
        return Stream.of(
                Arguments.of("id", "gen_random_uuid()"),
                Arguments.of("user_id", "'mallory'"),
                Arguments.of("idempotency_key", "idempotency_key || '-2'"),
                Arguments.of("request_fingerprint", "repeat('0', 64)"),
                Arguments.of("amount", "amount * 100"),
                Arguments.of("currency", "'GBP'"),
                Arguments.of("destination_iban", "'GB82WEST12345698765432'"),
                Arguments.of("destination_name", "'Mallory'"),
                Arguments.of("description", "'changed'"),
                Arguments.of("description", "NULL"),
                Arguments.of("provider_reference", "'ll_' || repeat('f', 32)"),
                Arguments.of("created_at", "created_at - interval '1 day'"));
    }

    @ParameterizedTest(name = "{0} := {1}")
    @MethodSource("paymentColumns")
    void aPaymentColumnCannotChangeInAnyStatusWithOrWithoutAVersionStep(String column, String edit) throws Exception {
        for (String status : STATUSES) {
            UUID id = insert(status);
            Map<String, Object> before = row(id);
            refused("UPDATE transfers SET " + column + " = " + edit + " WHERE id = ?", id);
            if (!status.equals("sent") && !status.equals("failed")) {
                // inside what is otherwise a legal step of the state machine
                refused("UPDATE transfers SET " + column + " = " + edit + ", previous_status = status, version = version + 1,"
                        + " last_actor = 'psql' WHERE id = ?", id);
            }
            assertEquals(before, row(id), status + " row unchanged after editing " + column);
        }
    }

    @Test
    void anAmountEditIsRefused() throws Exception {
        UUID id = insert("pending");
        SQLException e = refused("UPDATE transfers SET amount = 1000000 WHERE id = ?", id);
        assertTrue(e.getMessage().contains("cannot change amount"), e.getMessage());
        assertEquals(1250L, row(id).get("amount"));
    }

    @Test
    void anIbanEditOfAReconcilingTransferIsRefused() throws Exception {
        UUID id = insert("reconciling");
        refused("UPDATE transfers SET destination_iban = 'GB82WEST12345698765432' WHERE id = ?", id);
        refused("UPDATE transfers SET destination_iban = 'GB82WEST12345698765432', previous_status = status,"
                + " status = 'processing', version = version + 1, last_actor = 'psql' WHERE id = ?", id);
        Map<String, Object> row = row(id);
        assertEquals(IBAN, row.get("destination_iban"));
        assertEquals("reconciling", row.get("status"));
        assertEquals(0L, row.get("version"));
    }

    @Test
    void aProviderReferenceEditOfASentTransferIsRefused() throws Exception {
        UUID id = insert("sent");
        String reference = (String) row(id).get("provider_reference");
        refused("UPDATE transfers SET provider_reference = 'll_' || repeat('e', 32) WHERE id = ?", id);
        assertEquals(reference, row(id).get("provider_reference"));
    }

    @Test
    void whatTheStateMachineChangesStillChanges() throws Exception {
        UUID id = insert("pending");
        // a claim's shape: the identity is only read, and an unchanged SET of it is not an edit
        assertEquals(1, update("UPDATE transfers SET previous_status = status, status = 'processing', version = version + 1,"
                + " feed_xid = greatest(feed_xid, pg_current_xact_id()), claimed_by = 'w1', lease_expires_at = now(), attempts = attempts + 1, amount = amount,"
                + " last_actor = 'w1' WHERE id = ?", id));
        assertEquals(1, update("UPDATE transfers SET previous_status = status, status = 'sent', version = version + 1,"
                + " feed_xid = greatest(feed_xid, pg_current_xact_id()), claimed_by = NULL, lease_expires_at = NULL, last_actor = 'w1' WHERE id = ?", id));
        assertEquals("sent", row(id).get("status"));
    }

    @Test
    void historyCannotBeEditedDeletedOrTruncated() throws Exception {
        UUID id = insert("pending");
        update("INSERT INTO transfer_events (transfer_id, version, from_status, to_status, actor, reason, feed_xid)"
                + " VALUES (?, 0, NULL, 'pending', 'w1', 'accepted', pg_current_xact_id())", id);
        update("INSERT INTO transfer_events (transfer_id, version, from_status, to_status, actor, reason, feed_xid)"
                + " VALUES (?, 1, 'pending', 'processing', 'w1', 'claimed', pg_current_xact_id())", id);

        refused("UPDATE transfer_events SET actor = 'someone else' WHERE transfer_id = ?", id);
        refused("UPDATE transfer_events SET to_status = 'sent' WHERE transfer_id = ? AND version = 1", id);
        refused("DELETE FROM transfer_events WHERE transfer_id = ?", id);
        refused("TRUNCATE transfer_events");

        List<Map<String, Object>> events = query("SELECT version, to_status, actor FROM transfer_events"
                + " WHERE transfer_id = ? ORDER BY version", id);
        assertEquals(List.of(Map.of("version", 0L, "to_status", "pending", "actor", "w1"),
                Map.of("version", 1L, "to_status", "processing", "actor", "w1")), events);
    }

    // ---- SQL ----

    private static UUID insert(String status) throws SQLException {
        UUID id = UUID.randomUUID();
        update("INSERT INTO transfers (id, user_id, idempotency_key, request_fingerprint, amount, currency, destination_iban,"
                        + " destination_name, description, provider_reference, status, last_actor)"
                        + " VALUES (?, 'alice', ?, repeat('a', 64), 1250, 'EUR', ?, 'Ada Lovelace', 'Rent November', ?, ?, 'test')",
                id, "key-" + id, IBAN, "ll_" + id.toString().replace("-", ""), status);
        return id;
    }

    private static Map<String, Object> row(UUID id) throws SQLException {
        List<Map<String, Object>> rows = query("SELECT * FROM transfers WHERE id = ?", id);
        assertEquals(1, rows.size(), "the row " + id + " is still there under its id");
        return rows.get(0);
    }

    /** The statement fails, and the failure is the database's refusal, not a typo in the test. */
    private static SQLException refused(String sql, Object... params) {
        SQLException e = assertThrows(SQLException.class, () -> update(sql, params), () -> "refused: " + sql);
        assertNotNull(e.getSQLState());
        assertTrue(e.getSQLState().startsWith("23"), () -> "an integrity refusal (SQLSTATE 23xxx), not " + e.getSQLState()
                + ": " + e.getMessage());
        return e;
    }

    private static int update(String sql, Object... params) throws SQLException {
        try (Connection c = db.connect(OwnPostgres.SUPERUSER); PreparedStatement st = c.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                st.setObject(i + 1, params[i]);
            }
            return st.executeUpdate();
        }
    }

    private static List<Map<String, Object>> query(String sql, Object... params) throws SQLException {
        try (Connection c = db.connect(OwnPostgres.SUPERUSER)) {
            return Db.query(c, sql, params);
        }
    }
}
