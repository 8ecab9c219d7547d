package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.support.Metrics;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The HTTP server meters' tags stay a small, fixed set whatever clients send ({@link HttpMetricTags}): invented
 * methods and junk paths add no series, and no transfer id becomes a label.
 */
@QuarkusTest
class HttpMetricTagsTest {

    @TestHTTPResource("/")
    URL base;

    @Test
    void aThousandJunkMethodsAndPathsLeaveTheMetricSeriesCountUnchanged() throws Exception {
        HttpClient client = HttpClient.newHttpClient();
        Random random = new Random(20);
        String transferId = UUID.randomUUID().toString();
        junk(client, random, 50, transferId); // the first junk may add its one OTHER / UNMATCHED series
        Set<String> before = errorSeries(Metrics.scrape());
        junk(client, random, 1000, transferId);
        String after = Metrics.scrape();
        Set<String> added = new TreeSet<>(errorSeries(after));
        added.removeAll(before);
        assertEquals(Set.of(), added, "HTTP server series for 4xx answers added by 1,000 junk requests");
        assertTrue(!after.contains(transferId), "a transfer id sent with a wrong method must not become a label");
        assertTrue(!after.contains("JUNK"), "an invented method must not become a label");
    }

    private void junk(HttpClient client, Random random, int n, String transferId) throws Exception {
        for (int i = 0; i < n; i++) {
            String method = "JUNK" + Long.toString(random.nextLong() & Long.MAX_VALUE, 36).toUpperCase();
            String path = switch (i % 4) {
                case 0 -> "/v1/transfers";
                case 1 -> "/v1/transfers/" + transferId + "-" + i;
                case 2 -> "/v1/transfers/" + transferId + "/events/" + i;
                default -> "/junk/" + Long.toString(random.nextLong() & Long.MAX_VALUE, 36);
            };
            String verb = i % 3 == 0 ? "DELETE" : method;
            HttpResponse<Void> answer = client.send(HttpRequest.newBuilder(URI.create(base.toString()).resolve(path))
                    .method(verb, HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.discarding());
            assertTrue(answer.statusCode() >= 400 && answer.statusCode() < 500, verb + " " + path + " answered " + answer.statusCode());
        }
    }

    /**
     * The HTTP server series of 4xx answers (every junk request gets one), each named by its metric and labels
     * without its value. Other tests' requests that finish while this one runs may add series of their own
     * statuses; they are not what this test is about.
     */
    private static Set<String> errorSeries(String metrics) {
        return metrics.lines().filter(l -> l.startsWith("http_server_") && l.contains("status=\"4"))
                .map(l -> l.substring(0, l.lastIndexOf('}') + 1)).collect(Collectors.toSet());
    }
}
