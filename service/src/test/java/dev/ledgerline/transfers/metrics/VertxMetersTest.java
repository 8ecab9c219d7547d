package dev.ledgerline.transfers.metrics;

import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Metrics;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * After requests that go through Redis (a transfer created and replayed), the scrape holds no meter of the Vert.x Redis
 * client or its pool and no byte summary of the HTTP server's sockets ({@link VertxMeters}), and still the HTTP server's
 * timer and connection count, and the service's own Redis count.
 */
@QuarkusTest
class VertxMetersTest {

    @Test
    void noRedisPoolOrClientMetersNorSocketBytesButTheHttpServersAndOurOwn() {
        String token = Api.writer("vertx-meters-" + Api.newKey());
        String key = Api.newKey();
        String body = Api.body(1_234);
        assertEquals(201, Api.post(token, key, body).statusCode());
        assertEquals(201, Api.post(token, key, body).statusCode(), "the replay");
        String page = Metrics.scrape();
        List<String> redis = Arrays.stream(page.split("\n"))
                .filter(line -> !line.startsWith("#"))
                .filter(line -> line.startsWith("redis_") || line.contains("pool_type=\"redis\"")
                        || line.contains("clientType=\"redis\""))
                .toList();
        assertEquals(List.of(), redis, "meters of the Vert.x Redis client or its pool");
        List<String> bytes = Arrays.stream(page.split("\n"))
                .filter(line -> line.startsWith("http_server_bytes_"))
                .toList();
        assertEquals(List.of(), bytes, "byte summaries of the HTTP server's sockets");
        assertTrue(Metrics.sum(page, "http_server_active_connections", "") >= 0, "the HTTP server's connection count is still scraped");
        assertTrue(Metrics.sum(page, "http_server_requests_seconds_count", "uri=\"/v1/transfers\"") >= 2,
                "the HTTP server's timer counts both POSTs");
        assertTrue(Metrics.sum(page, "ledgerline_redis_commands_total", "") > 0, "the service counts its Redis commands");
    }
}
