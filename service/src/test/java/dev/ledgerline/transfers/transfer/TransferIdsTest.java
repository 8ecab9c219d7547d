package dev.ledgerline.transfers.transfer;

import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Await;
import dev.ledgerline.transfers.support.Db;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A transfer's id carries its creation time (V18), and the statements addressed by an id read the partitions of
 * {@code transfers} from that time on only, for the plan PostgreSQL makes for the first executions of a prepared
 * statement (custom) and for the one it may switch to (generic). Old days are partitions made years back, as the
 * retention job keeps thirty of them attached.
 */
@QuarkusTest
class TransferIdsTest {

    private static final Duration DEADLINE = Duration.ofSeconds(60);
    private static final Duration DAY = Duration.ofDays(1);
    private static final DateTimeFormatter PARTITION = DateTimeFormatter.ofPattern("'transfers_'yyyyMMdd't'HHmmss")
            .withZone(ZoneOffset.UTC);
    /** A scan of a partition of transfers in a plan, and whether it ran: "Index Scan using … on transfers_x t_1 (never executed)". */
    private static final Pattern SCAN = Pattern.compile("Scan(?: using \\S+)? on (transfers_\\w+)[^(\\n]*(\\(never executed\\))?");

    @Inject
    TransferRepository transfers;

    @Test
    void aNewTransfersIdIsOfVersion7AndCarriesTheMillisecondItWasCreatedIn() {
        String token = Api.writer("ids-" + UUID.randomUUID());
        String id = Api.create(token, 501);
        UUID uuid = UUID.fromString(id);
        assertEquals(7, uuid.version(), id);
        assertEquals(2, uuid.variant(), id);
        long createdMillis = Db.count("SELECT floor(extract(epoch FROM created_at) * 1000)::bigint FROM transfers WHERE id = ?::uuid", id);
        assertEquals(createdMillis, uuid.getMostSignificantBits() >>> 16, "the id's first 48 bits are created_at in ms");
        // two transfers created in the same millisecond still differ: the rest of the id is random
        String other = Api.create(token, 502);
        assertTrue(!other.equals(id) && UUID.fromString(other).version() == 7);
    }

    @Test
    void statementsAddressedByIdReadOnlyThePartitionsFromTheIdsTimeOn() throws Exception {
        Instant day0 = Instant.parse("2019-01-01T00:00:00Z").plus(DAY.multipliedBy(ThreadLocalRandom.current().nextInt(300)));
        int made = await().atMost(DEADLINE).until(() -> transfers.createTransferPartitions(day0, day0.plus(DAY.multipliedBy(3)),
                DAY, 10, Duration.ofSeconds(1)).await().atMost(DEADLINE), n -> n >= 0);
        assertEquals(3, made, "three old days, none of them there before");
        List<String> oldDays = List.of(PARTITION.format(day0), PARTITION.format(day0.plus(DAY)), PARTITION.format(day0.plus(DAY.multipliedBy(2))));

        String owner = "ids-" + UUID.randomUUID();
        String key = Api.newKey();
        String id = Api.post(Api.writer(owner), key, Api.body(503)).then().statusCode(201).extract().path("id");
        Await.status(id, "sent", DEADLINE);
        String home = (String) Db.query("SELECT tableoid::regclass::text AS p FROM transfers WHERE id = ?::uuid", id).get(0).get("p");

        // each statement as the service prepares it, with its parameters; the writes in a transaction rolled back
        Map<String, String> statements = Map.of(
                "find by id", "PREPARE s (uuid) AS " + TransferSql.FIND_BY_ID + "; EXECUTE s ('" + id + "')",
                "exists", "PREPARE s (uuid) AS " + TransferSql.EXISTS_BY_ID + "; EXECUTE s ('" + id + "')",
                "find by key", "PREPARE s (text, text) AS " + TransferSql.FIND_BY_KEY + "; EXECUTE s ('" + owner + "', '" + key + "')",
                "claim", "PREPARE s (uuid, text, bigint, text, text, bigint, bigint, bigint, bigint) AS " + TransferSql.CLAIM
                        + "; EXECUTE s ('" + id + "', 'test', 1000, 'plan', 'pending', 0, 1000, 0, 1000)",
                "claim batch", "PREPARE s (uuid[], text[], bigint[], text[], text[], bigint[], bigint, bigint, bigint) AS "
                        + TransferSql.CLAIM_BATCH + "; EXECUTE s (ARRAY['" + id + "']::uuid[], ARRAY['test'], ARRAY[1000], "
                        + "ARRAY['plan'], ARRAY['pending'], ARRAY[0], 1000, 0, 1000)",
                "cancel", "PREPARE s (uuid, bigint, text, text) AS " + TransferSql.CANCEL + "; EXECUTE s ('" + id + "', 0, 'test', 'plan')",
                "history", "PREPARE s (uuid) AS " + TransferSql.EVENTS + "; EXECUTE s ('" + id + "')");
        for (String mode : List.of("force_custom_plan", "force_generic_plan")) {
            for (Map.Entry<String, String> s : statements.entrySet()) {
                List<String> read = partitionsRead(mode, s.getValue());
                String what = s.getKey() + ", " + mode + ": " + read;
                assertTrue(read.contains(home), "the partition holding the row is read; " + what);
                for (String old : oldDays) {
                    assertTrue(!read.contains(old), "no partition that ended before the id's time is read; " + what);
                }
            }
        }
    }

    @Test
    void aTransferWhoseIdCarriesALaterTimeThanItsCreationIsRefused() {
        String owner = "ids-" + UUID.randomUUID();
        String insert = "INSERT INTO transfers (id, user_id, idempotency_key, request_fingerprint, amount, currency, destination_iban,"
                + " destination_name, provider_reference, status, next_attempt_at, last_actor, created_at, updated_at)"
                + " VALUES (%s, ?, ?, 'fp', 10, 'EUR', 'DE89370400440532013000', 'Ada', ?, 'sent', now(), 'test',"
                + " now() - interval '1 day', now() - interval '1 day')";
        // today's id on a row of yesterday: statements addressed by the id would never find it
        IllegalStateException refused = assertThrows(IllegalStateException.class, () -> Db.update(
                insert.formatted("ledgerline_transfer_id(gen_random_uuid(), now())"), owner, "later", "ll_later_" + owner));
        assertTrue(refused.getCause() instanceof SQLException e && "23514".equals(e.getSQLState())
                && e.getMessage().contains("before the time its id carries"), String.valueOf(refused.getCause()));
        // an id of yesterday, and a random one of before V18 (which carries no time), are taken
        assertEquals(1, Db.update(insert.formatted("ledgerline_transfer_id(gen_random_uuid(), now() - interval '1 day')"),
                owner, "same", "ll_same_" + owner));
        assertEquals(1, Db.update(insert.formatted("gen_random_uuid()"), owner, "random", "ll_random_" + owner));
    }

    /** The partitions of transfers a statement's plan read (scans that did not say "never executed"). */
    private static List<String> partitionsRead(String planCacheMode, String prepareAndExecute) throws SQLException {
        String[] parts = prepareAndExecute.split("; EXECUTE ", 2);
        List<String> read = new ArrayList<>();
        try (Connection c = Db.connect(); Statement st = c.createStatement()) {
            c.setAutoCommit(false);
            st.execute("SET LOCAL plan_cache_mode = " + planCacheMode);
            st.execute(parts[0]);
            StringBuilder plan = new StringBuilder();
            try (ResultSet rs = st.executeQuery("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) EXECUTE " + parts[1])) {
                while (rs.next()) {
                    plan.append(rs.getString(1)).append('\n');
                }
            } finally {
                c.rollback();
            }
            Matcher m = SCAN.matcher(plan);
            while (m.find()) {
                if (m.group(2) == null && !read.contains(m.group(1))) {
                    read.add(m.group(1));
                }
            }
            assertTrue(plan.indexOf("transfers_") >= 0, "a plan over transfers:\n" + plan);
        }
        return read;
    }
}
