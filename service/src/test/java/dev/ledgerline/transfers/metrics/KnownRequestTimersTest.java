package dev.ledgerline.transfers.metrics;

import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Metrics;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The HTTP server's request timer counts every answer once, under the tags the binder gives it, whether the timer of a
 * successful answer came from {@link KnownRequestTimers}' map or from the binder: created transfers and their replays (the
 * same 201), reads of a transfer, and refused bodies (which stay with the binder), each series by its own count and no series
 * twice.
 */
@QuarkusTest
class KnownRequestTimersTest {

    private static final String CREATED = "method=\"POST\",outcome=\"SUCCESS\",status=\"201\",uri=\"/v1/transfers\"";
    private static final String READ = "method=\"GET\",outcome=\"SUCCESS\",status=\"200\",uri=\"/v1/transfers/{id}\"";
    private static final String REFUSED = "method=\"POST\",outcome=\"CLIENT_ERROR\",status=\"400\",uri=\"/v1/transfers\"";

    @Inject
    VertxMeters meters;

    @Test
    void eachAnswerIsTimedOnceUnderTheBindersTagsWhereverItsTimerCameFrom() {
        String token = Api.writer("known-timers-" + Api.newKey());
        String[] counted = {CREATED, READ, REFUSED};
        int[] answers = {10, 5, 5}; // a replay answers the creation's 201 again
        double[] before = Arrays.stream(counted).mapToDouble(KnownRequestTimersTest::count).toArray();
        double createdSeconds = Math.max(0, Metrics.sum("http_server_requests_seconds_sum", CREATED));
        for (int i = 0; i < 5; i++) {
            String key = Api.newKey();
            String body = Api.body(100 + i);
            var created = Api.post(token, key, body);
            assertEquals(201, created.statusCode());
            assertEquals(201, Api.post(token, key, body).statusCode(), "the replay");
            assertEquals(200, Api.get(token, created.jsonPath().getString("id")).statusCode());
            assertEquals(400, Api.post(token, Api.newKey(), "{\"amount\":").statusCode());
        }
        String page = Metrics.scrape();
        for (int i = 0; i < counted.length; i++) {
            assertEquals(before[i] + answers[i], Metrics.sum(page, "http_server_requests_seconds_count", counted[i]), 0.0,
                    "answers counted under " + counted[i]);
            assertEquals(1, series(page, counted[i]), "series of the timer under " + counted[i]);
        }
        assertTrue(Metrics.sum(page, "http_server_requests_seconds_sum", CREATED) > createdSeconds,
                "the created transfers' time is added to the timer's sum");
        // the public server's map knows both successful kinds: their later answers were timed from it
        assertTrue(meters.servers().stream().anyMatch(server -> server.known() >= 2),
                "a server's map holds the timers of the successful answers: " + meters.servers().stream()
                        .map(KnownRequestTimers::known).toList());
    }

    /** The series' count so far, 0 before its first answer (when the scrape has no such series). */
    private static double count(String labels) {
        return Math.max(0, Metrics.sum("http_server_requests_seconds_count", labels));
    }

    /** How many count lines of the request timer carry exactly {@code labels}. */
    private static long series(String page, String labels) {
        List<String> lines = page.lines().filter(l -> l.startsWith("http_server_requests_seconds_count{" + labels + "}")).toList();
        return lines.size();
    }
}
