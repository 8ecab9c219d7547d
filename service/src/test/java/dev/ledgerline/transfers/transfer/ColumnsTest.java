package dev.ledgerline.transfers.transfer;

import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Await;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A transfer row read by position ({@link Columns}) is the row read by name, wherever the columns stand in the result,
 * and in whatever order: a result whose columns are not {@link TransferSql#COLUMNS} in order is read by name. The
 * statements the service runs for a transfer's way from the POST to {@code sent} and for its reads are all read by
 * position.
 */
@QuarkusTest
class ColumnsTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    @Inject
    Pool pool;

    @Test
    void aRowReadByPositionIsTheRowReadByNameAndAnyOtherLayoutIsReadByName() {
        long before = Columns.BY_NAME.get();
        String token = Api.writer("columns-" + UUID.randomUUID());
        String id = Api.create(token, 4_321);
        Await.status(id, "sent", Duration.ofSeconds(20));
        Api.get(token, id).then().statusCode(200);
        Api.as(token).get("/v1/me/transfers").then().statusCode(200);
        assertEquals(before, Columns.BY_NAME.get(), "the insert, the claim, the fence and the reads are read by position");

        Columns columns = new Columns(TransferSql.COLUMNS);
        Row plain = one("SELECT " + TransferSql.COLUMNS + " FROM transfers WHERE id = $1", id);
        assertEquals(0, columns.base(plain));
        Transfer expected = Transfer.byName(plain);
        assertEquals(UUID.fromString(id), expected.id());
        assertEquals(4_321L, expected.amount());
        assertEquals(expected, Transfer.from(plain));

        Row shifted = one("SELECT 1 AS one, 'x' AS status_text, " + TransferSql.COLUMNS + " FROM transfers WHERE id = $1", id);
        assertEquals(2, columns.base(shifted));
        assertEquals(expected, Transfer.from(shifted));

        List<String> names = new ArrayList<>(Arrays.stream(TransferSql.COLUMNS.split(",")).map(String::strip).toList());
        Collections.swap(names, 3, 10); // amount and version: both bigint, so only the names tell them apart
        Row swapped = one("SELECT " + String.join(", ", names) + " FROM transfers WHERE id = $1", id);
        long byName = Columns.BY_NAME.get();
        assertEquals(-1, columns.base(swapped));
        assertTrue(Columns.BY_NAME.get() > byName, "counted");
        assertEquals(expected, Transfer.from(swapped));

        Row missing = one("SELECT id, user_id FROM transfers WHERE id = $1", id);
        assertEquals(-1, columns.base(missing));
    }

    private Row one(String sql, String id) {
        return pool.preparedQuery(sql).execute(Tuple.of(UUID.fromString(id))).await().atMost(WAIT).iterator().next();
    }
}
