package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.support.Api;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.UUID;

import static dev.ledgerline.transfers.support.Api.as;
import static org.hamcrest.Matchers.hasItem;

/**
 * The parameters of {@code GET /v1/transfers} ({@link ListQuery}): an age or a cursor beyond what the listing can
 * ask PostgreSQL about is a 400 naming the parameter, never a 500.
 */
@QuarkusTest
class ListQueryTest {

    private static final String TRANSFERS_PROBLEM = "application/problem+json";

    @Test
    void durationsBeyondTheBoundAreA400NeverA500() {
        String ops = Api.token("ops-durations", List.of("transfers.read.all"));
        for (String age : List.of("P3000000D", "PT9223372036854775807S", "P3651D", "PT99999999999999999999S", "-PT5M", "P1Y")) {
            as(ops).queryParam("olderThan", age).get("/v1/transfers").then()
                    .statusCode(400).contentType(TRANSFERS_PROBLEM).body("errors.field", hasItem("olderThan"));
        }
        // a cursor naming a date PostgreSQL cannot hold is no cursor
        String farFuture = Base64.getUrlEncoder().withoutPadding().encodeToString(
                ("+275760-09-13T00:00Z|" + UUID.randomUUID()).getBytes(StandardCharsets.UTF_8));
        as(ops).queryParam("after", farFuture).get("/v1/transfers").then()
                .statusCode(400).body("errors.field", hasItem("after"));
        as(ops).queryParam("olderThan", "P3650D").get("/v1/transfers").then().statusCode(200);
    }
}
