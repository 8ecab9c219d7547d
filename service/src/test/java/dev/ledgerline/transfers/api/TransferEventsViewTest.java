package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Await;
import dev.ledgerline.transfers.support.Db;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static dev.ledgerline.transfers.support.Api.writer;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.not;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A transfer's history as its client reads it ({@link TransferEventsView}): each event names the role that made
 * the change, never the host and process, which stay in the table for operators.
 */
@QuarkusTest
class TransferEventsViewTest {

    @Test
    void eventsNameARoleNotAHost() {
        String token = writer("history");
        String id = Api.create(token, 77);
        Await.status(id, "sent", Duration.ofSeconds(20));
        var events = Api.as(token).get("/v1/transfers/" + id + "/events").then().statusCode(200).extract().jsonPath();
        List<String> actors = events.getList("events.actor");
        assertEquals("api", actors.get(0));
        assertTrue(actors.stream().allMatch(a -> List.of("api", "worker", "sweeper", "reconciler").contains(a)), "actors: " + actors);
        // the instance is still recorded for operators
        assertTrue(Db.count("SELECT count(*) FROM transfer_events WHERE transfer_id = ?::uuid AND actor LIKE '%:%'", id) > 0);
        Api.as(token).get("/v1/transfers/" + id + "/events").then().body(not(containsString(":" + ProcessHandle.current().pid())));
    }
}
