package dev.ledgerline.transfers.transfer;

import dev.ledgerline.transfers.problem.ProblemType;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.Rows;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static dev.ledgerline.transfers.support.Api.as;
import static dev.ledgerline.transfers.support.Api.writer;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The per-principal cap on held long polls ({@link HeldPolls}, {@code ledgerline.long-poll.max-waiting-per-principal}):
 * one token cannot take the instance's whole budget of waiting requests.
 */
@QuarkusTest
class HeldPollsTest {

    private static final String TRANSFERS_PROBLEM = "application/problem+json";

    /**
     * Twelve polls at once from one principal: none of them can end before the transfer changes, so exactly ten
     * are held and exactly two are refused with 429, whatever order they arrive in.
     */
    @Test
    void oneAPrincipalHoldsAtMostItsShareOfLongPolls() throws Exception {
        String token = writer("greedy-poller");
        String id = Rows.parkedPending("greedy-poller");
        ExecutorService clients = Executors.newFixedThreadPool(12);
        List<CompletableFuture<Response>> polls = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            polls.add(CompletableFuture.supplyAsync(() ->
                    as(token).header("Prefer", "wait=25").header("If-None-Match", "\"0\"").get("/v1/transfers/" + id), clients));
        }
        clients.shutdown();
        org.awaitility.Awaitility.await("two polls refused").atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100))
                .until(() -> polls.stream().filter(CompletableFuture::isDone).count() >= 2);
        List<Response> refused = polls.stream().filter(CompletableFuture::isDone).map(CompletableFuture::join).toList();
        assertEquals(2, refused.size(), "refused at once");
        for (Response r : refused) {
            r.then().statusCode(429).contentType(TRANSFERS_PROBLEM).header("Retry-After", equalTo("1"))
                    .body("type", equalTo(ProblemType.BASE + "rate-limited"));
        }
        // another principal is not affected
        String other = writer("patient-poller");
        String theirs = Rows.parkedPending("patient-poller");
        as(other).header("Prefer", "wait=1").header("If-None-Match", "\"0\"").get("/v1/transfers/" + theirs).then().statusCode(304);
        // the change answers the ten held ones at once; then the principal may poll again
        Db.update("UPDATE transfers SET status = 'failed', version = version + 1, feed_xid = greatest(feed_xid, pg_current_xact_id()), failure_reason = 'test', "
                + "last_actor = 'test', last_reason = 'released' WHERE id = ?::uuid", id);
        long answered = 0;
        for (CompletableFuture<Response> poll : polls) {
            Response r = poll.get(20, TimeUnit.SECONDS);
            if (r.statusCode() == 200) {
                r.then().body("status", equalTo("failed"));
                answered++;
            }
        }
        assertEquals(10, answered, "held until the change");
        as(token).header("Prefer", "wait=1").header("If-None-Match", "\"1\"").get("/v1/transfers/" + id).then().statusCode(304);
    }
}
