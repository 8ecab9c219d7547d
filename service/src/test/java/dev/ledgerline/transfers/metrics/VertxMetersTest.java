package dev.ledgerline.transfers.metrics;

import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Metrics;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;
import java.util.function.Predicate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * After requests that go through Redis (a transfer created and replayed), the scrape holds no meter of the Vert.x Redis
 * client or its pool, no byte summary of the HTTP server's sockets, no gauge of the connection limit, no client meter of
 * the PostgreSQL connections and no meter of Vert.x's worker pools ({@link VertxMeters}), and still the HTTP server's
 * timer and connection count, the count of connections the limit refused, the PostgreSQL pool's meters and the
 * service's own Redis count.
 */
@QuarkusTest
class VertxMetersTest {

    @Test
    void noRedisOrPostgresClientMetersNorSocketBytesNorWorkerPoolsButTheHttpServersThePoolsAndOurOwn() {
        String token = Api.writer("vertx-meters-" + Api.newKey());
        String key = Api.newKey();
        String body = Api.body(1_234);
        assertEquals(201, Api.post(token, key, body).statusCode());
        assertEquals(201, Api.post(token, key, body).statusCode(), "the replay");
        String page = Metrics.scrape();
        List<String> redis = samples(page, line -> line.startsWith("redis_") || line.contains("pool_type=\"redis\"")
                || line.contains("clientType=\"redis\""));
        assertEquals(List.of(), redis, "meters of the Vert.x Redis client or its pool");
        List<String> bytes = samples(page, line -> line.startsWith("http_server_bytes_"));
        assertEquals(List.of(), bytes, "byte summaries of the HTTP server's sockets");
        List<String> postgres = samples(page, line -> line.startsWith("postgresql_") || line.startsWith("m__")
                || line.contains("clientType=\"sql\""));
        assertEquals(List.of(), postgres, "client meters of the PostgreSQL connections");
        assertTrue(Metrics.sum(page, "sql_pool_usage_seconds_count", "") > 0, "the PostgreSQL pool's meters are still scraped");
        List<String> limitGauges = samples(page, line -> line.startsWith("vertx_http_connections_current")
                || line.startsWith("vertx_http_connections_max"));
        assertEquals(List.of(), limitGauges, "the connection limit's gauges");
        assertTrue(Metrics.sum(page, "vertx_http_connections_rejected_total", "") >= 0, "the connections the limit refused are counted");
        List<String> workers = samples(page, line -> line.startsWith("worker_pool_") || line.contains("pool_type=\"worker\""));
        assertEquals(List.of(), workers, "meters of Vert.x's worker pools");
        assertTrue(Metrics.sum(page, "http_server_active_connections", "") >= 0, "the HTTP server's connection count is still scraped");
        assertTrue(Metrics.sum(page, "http_server_requests_seconds_count", "uri=\"/v1/transfers\"") >= 2,
                "the HTTP server's timer counts both POSTs");
        assertTrue(Metrics.sum(page, "ledgerline_redis_commands_total", "") > 0, "the service counts its Redis commands");
    }

    /** The scrape's sample lines (not its comments) that {@code match}. */
    private static List<String> samples(String page, Predicate<String> match) {
        return Arrays.stream(page.split("\n")).filter(line -> !line.startsWith("#")).filter(match).toList();
    }
}
