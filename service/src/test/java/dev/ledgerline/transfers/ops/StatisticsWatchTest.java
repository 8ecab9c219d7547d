package dev.ledgerline.transfers.ops;

import dev.ledgerline.devstack.LocalPostgres;
import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Await;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.Metrics;
import dev.ledgerline.transfers.support.TestStack;
import io.quarkus.test.junit.QuarkusTest;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code ledgerline_database_statistics_due_seconds} against a real PostgreSQL with autovacuum turned off, as on a
 * server where someone turned it off: a day's partition of {@code transfers} changed past autovacuum's threshold is
 * reported, for longer and longer, until it is analyzed, and is back to 0 once it is.
 */
@QuarkusTest
class StatisticsWatchTest {

    private static final String DUE = "ledgerline_database_statistics_due_seconds";

    @Test
    void aPartitionLeftUnanalyzedIsReportedForLongerAndLongerUntilAnAnalyze() throws Exception {
        String token = Api.writer("statistics");
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            ids.add(Api.post(token, Api.newKey(), Api.body(7_300 + i)).then().statusCode(201).extract().path("id"));
        }
        for (String id : ids) {
            Await.status(id, "sent", Duration.ofSeconds(20));
        }
        String partition = (String) Db.query("SELECT tableoid::regclass::text AS p FROM transfers WHERE id = ?::uuid",
                ids.get(0)).get(0).get("p");
        LocalPostgres pg = TestStack.current().postgres();
        pg.setReloadable("autovacuum", "off");
        try {
            Db.update("ANALYZE transfers");
            Db.update("ANALYZE transfer_events");
            Db.update("ANALYZE transfer_keys");
            Awaitility.await("nothing due after an ANALYZE of every table").atMost(Duration.ofSeconds(20))
                    .pollInterval(Duration.ofMillis(250)).until(() -> due() == 0);

            // change every row of the partition, as often as it takes to pass autovacuum's threshold for it
            Map<String, Object> size = Db.query("SELECT c.reltuples::float8 AS tuples, (SELECT count(*) FROM " + partition
                    + ") AS n FROM pg_class c WHERE c.oid = ?::regclass", partition).get(0);
            double threshold = 50 + 0.1 * Math.max(0, ((Number) size.get("tuples")).doubleValue());
            long rows = ((Number) size.get("n")).longValue();
            long passes = (long) Math.ceil(threshold / rows) + 1;
            for (long i = 0; i < passes; i++) {
                Db.update("UPDATE " + partition + " SET updated_at = updated_at");
            }

            Awaitility.await("the partition reported due").atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(250)).until(() -> due() >= 3);
            double seen = due();
            Awaitility.await("and for longer as time goes by").atMost(Duration.ofSeconds(20))
                    .pollInterval(Duration.ofMillis(250)).until(() -> due() >= seen + 2);

            Db.update("ANALYZE " + partition);
            Awaitility.await("nothing due once it was analyzed").atMost(Duration.ofSeconds(20))
                    .pollInterval(Duration.ofMillis(250)).until(() -> due() == 0);
        } finally {
            pg.setReloadable("autovacuum", null);
        }
        assertTrue(Metrics.scrape().contains("# HELP " + DUE + " "), "the gauge has its HELP text");
    }

    private static double due() {
        return Metrics.sum(DUE, "");
    }
}
