package dev.ledgerline.transfers.ops;

import dev.ledgerline.transfers.metrics.Meters;
import dev.ledgerline.transfers.metrics.ServiceMeters;
import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Await;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.Management;
import dev.ledgerline.transfers.support.Metrics;
import dev.ledgerline.transfers.support.Rows;
import dev.ledgerline.transfers.support.TestStack;
import dev.ledgerline.transfers.transfer.TransferChanges;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheus.PrometheusMeterRegistry;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.ledgerline.transfers.support.Api.as;
import static dev.ledgerline.transfers.support.Api.writer;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What on-call engineers and polling services rely on: readiness, metrics, the management port they are served on,
 * cheap polling, the stuck-transfer listing.
 */
@QuarkusTest
class OperationsTest {

    @Inject
    TransferChanges changes;

    @Inject
    @ServiceMeters
    MeterRegistry serviceMeters;

    @TestHTTPResource("/")
    URL base;

    /**
     * The service's meters are registered on the Prometheus registry itself, not through the composite that would
     * forward every count to it, and what they count is what the scrape exports.
     */
    @Test
    void theServicesMetersCountOnTheRegistryTheScrapeReads() {
        assertTrue(serviceMeters instanceof PrometheusMeterRegistry, serviceMeters.getClass().getName());
        double before = Math.max(0, Metrics.sum("ledgerline_replays_early_total", ""));
        Meters.REPLAYS_EARLY.counter().register(serviceMeters).increment(3);
        assertEquals(before + 3, Metrics.sum("ledgerline_replays_early_total", ""), 0.0);
    }

    @AfterEach
    void heal() throws Exception {
        TestStack.heal();
    }

    @Test
    void readinessStaysUpButSaysDegradedWhenOnlyRedisIsDown() throws Exception {
        // a connection pooled before another test restarted PostgreSQL may fail one check: start from a settled service
        Awaitility.await("ready").atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(250))
                .until(() -> Management.given().get("/q/health/ready").statusCode() == 200);
        Management.given().get("/q/health/ready").then().statusCode(200)
                .body("status", equalTo("UP"))
                .body("checks.find { it.name == 'redis' }.data.redis", equalTo("up"))
                .body("checks.find { it.name == 'flyway' }.data.schemaVersion", equalTo(latestMigration()));
        TestStack.current().redis().kill();
        Management.given().get("/q/health/ready").then().statusCode(200)
                .body("status", equalTo("UP"))
                .body("checks.find { it.name == 'redis' }.data.redis", equalTo("degraded"));
    }

    @Test
    void readinessIsDownWhenPostgresIsDown() throws Exception {
        TestStack.current().postgres().stop();
        Management.given().get("/q/health/ready").then().statusCode(503).body("status", equalTo("DOWN"));
        Management.given().get("/q/health/live").then().statusCode(200);
        TestStack.current().postgres().startAgain();
        Awaitility.await("ready again").atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(250))
                .until(() -> Management.given().get("/q/health/ready").statusCode() == 200);
    }

    /** {@code /q/*} lives on the management interface only: the API port answers 404 however the path is spelled. */
    @Test
    void operationalEndpointsAreOnTheManagementPortOnly() throws Exception {
        HttpClient client = HttpClient.newHttpClient();
        for (String path : List.of("/q/metrics", "/q/health/live", "/q/openapi", "/v1/%2e%2e/q/metrics", "/v1/transfers/%2e%2e/%2e%2e/q/health")) {
            HttpResponse<String> answer = client.send(HttpRequest.newBuilder(URI.create(base.toString().replaceAll("/$", "") + path)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(404, answer.statusCode(), path + " on the API port: " + answer.body());
        }
        Management.given().get("/q/health/live").then().statusCode(200);
        assertTrue(Metrics.scrape().contains("ledgerline_"), "metrics are served on the management port");
    }

    @Test
    void aMatchingETagIsAnsweredNotModified() {
        String token = writer("poller");
        String id = Api.create(token, 900);
        Await.status(id, "sent", Duration.ofSeconds(20));
        String etag = Api.get(token, id).then().statusCode(200).extract().header("ETag");
        as(token).header("If-None-Match", etag).get("/v1/transfers/" + id).then()
                .statusCode(304).header("ETag", etag);
        as(token).header("If-None-Match", "\"0\"").get("/v1/transfers/" + id).then()
                .statusCode(200).body("status", equalTo("sent"));
    }

    @Test
    void ifNoneMatchComparesWeaklyAcceptsListsAndStarAndIgnoresIfMatch() {
        String token = writer("validators");
        String id = Api.create(token, 901);
        Await.status(id, "sent", Duration.ofSeconds(20));
        String etag = Api.get(token, id).then().statusCode(200).extract().header("ETag");
        for (String ifNoneMatch : new String[] {"W/" + etag, "\"0\", " + etag, "*"}) {
            as(token).header("If-None-Match", ifNoneMatch).get("/v1/transfers/" + id).then()
                    .statusCode(304).header("ETag", etag);
        }
        as(token).header("If-None-Match", "W/\"0\", \"999\"").get("/v1/transfers/" + id).then()
                .statusCode(200).header("ETag", etag);
        as(token).header("If-Match", "\"0\"").get("/v1/transfers/" + id).then()
                .statusCode(200).header("ETag", etag);
    }

    @Test
    void aLongPollWakesOnAChangeMadeElsewhereLongBeforeItsWaitEnds() throws Exception {
        String token = writer("longpoll");
        String id = Rows.parked("longpoll", "pending", 0);
        int waitingBefore = changes.waiting();

        long asked = System.nanoTime();
        CompletableFuture<Response> poll = CompletableFuture.supplyAsync(() ->
                as(token).header("Prefer", "wait=10").header("If-None-Match", "\"0\"").get("/v1/transfers/" + id));
        Awaitility.await("the poll is registered").atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(10))
                .until(() -> changes.waiting() > waitingBefore || poll.isDone());
        assertFalse(poll.isDone(), "the poll holds while nothing changes, but answered " + (poll.isDone() ? poll.get().statusCode() : 0));

        // a change committed by "another instance": straight to the database, the way any instance's fence writes
        Db.update("UPDATE transfers SET status = 'failed', version = version + 1, feed_xid = greatest(feed_xid, pg_current_xact_id()), failure_reason = 'test', "
                + "last_actor = 'other-instance', last_reason = 'changed elsewhere' WHERE id = ?::uuid", id);
        long changed = System.nanoTime();
        Response answer = poll.get(10, TimeUnit.SECONDS);
        long tookMs = (System.nanoTime() - changed) / 1_000_000;
        long waitedMs = (System.nanoTime() - asked) / 1_000_000;

        answer.then().statusCode(200).body("status", equalTo("failed")).header("Preference-Applied", "wait=10");
        // the wake-up, not the 10 s timer, answered it: a bound relative to the wait, not to the machine's speed
        assertTrue(waitedMs < 5_000, "answered " + tookMs + " ms after the change, " + waitedMs + " ms into a 10 s wait");
    }

    @Test
    void aLongPollWithoutAChangeWaitsItsTimeAndAnswersNotModified() {
        String token = writer("longpoll");
        String id = Rows.parked("longpoll", "pending", 0);
        long start = System.nanoTime();
        as(token).header("Prefer", "wait=1").header("If-None-Match", "\"0\"").get("/v1/transfers/" + id).then()
                .statusCode(304).header("Preference-Applied", "wait=1");
        long tookMs = (System.nanoTime() - start) / 1_000_000;
        // the lower bound is the point; the upper one only rules out a hang, so it leaves a loaded machine room
        assertTrue(tookMs >= 950 && tookMs < 10_000, "waited " + tookMs + " ms");
    }

    @Test
    void aPostThatPrefersToWaitAnswersWithTheFinalStatus() {
        Api.as(writer("waiter")).contentType("application/json").header("Idempotency-Key", Api.newKey())
                .header("Prefer", "wait=10").body(Api.body(321))
                .post("/v1/transfers").then()
                .statusCode(201)
                .header("Preference-Applied", "wait=10")
                .body("status", equalTo("sent"));
    }

    @Test
    void stuckTransfersArePagedOldestFirstForOperationsOnly() {
        List<String> stuck = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            stuck.add(Rows.parked("stuck-owner", "reconciling", 20 - i));
        }
        String ops = Api.token("ops", List.of("transfers.read.all"));
        as(writer("stuck-owner")).get("/v1/transfers?status=reconciling").then().statusCode(403);

        List<String> seen = new ArrayList<>();
        String cursor = null;
        int pages = 0;
        do {
            var request = as(ops).queryParam("status", "reconciling").queryParam("olderThan", "PT5M").queryParam("limit", 2);
            if (cursor != null) {
                request.queryParam("after", cursor);
            }
            var page = request.get("/v1/transfers").then().statusCode(200).extract().jsonPath();
            List<String> ids = page.getList("items.id");
            assertTrue(ids.size() <= 2);
            seen.addAll(ids);
            cursor = page.getString("nextCursor");
            pages++;
        } while (cursor != null && pages < 50);

        List<String> mine = seen.stream().filter(stuck::contains).toList();
        assertEquals(stuck, mine, "each stuck transfer exactly once, oldest first");
        as(ops).queryParam("limit", 0).get("/v1/transfers").then().statusCode(400).body("errors.field", hasItem("limit"));
        as(ops).queryParam("olderThan", "5 minutes").get("/v1/transfers").then().statusCode(400);
    }

    @Test
    void metricsCountEachStepOfATransfer() {
        List<String> counters = List.of(
                "ledgerline_transfers_requests_total|outcome=\"created\"",
                "ledgerline_lock_acquire_total|result=\"not_needed\"",
                "ledgerline_claim_total|result=\"won\"",
                "ledgerline_provider_send_total|outcome=\"completed\"",
                "ledgerline_transfers_finished_total|status=\"sent\"",
                "ledgerline_fence_batch_size_fences_count|",
                "ledgerline_fence_batch_size_fences_sum|",
                "ledgerline_pipeline_latency_seconds_count|");
        Map<String, Double> before = new HashMap<>();
        counters.forEach(c -> before.put(c, Math.max(0, Metrics.sum(c.split("\\|")[0], c.split("\\|", -1)[1]))));

        // claimed by the statement that inserts it: no claim statement, so ledgerline_claim_batch_size does not move
        String id = Api.create(writer("metrics"), 42);
        Await.status(id, "sent", Duration.ofSeconds(20));
        // other tests' transfers may finish meanwhile, so each counter moved by at least this one transfer
        Awaitility.await("every step counted").atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
            for (String c : counters) {
                double now = Metrics.sum(c.split("\\|")[0], c.split("\\|", -1)[1]);
                assertTrue(now >= before.get(c) + 1, c + " went from " + before.get(c) + " to " + now);
            }
        });
        Management.given().get("/q/metrics").then().statusCode(200)
                .body(containsString("ledgerline_idempotency_total"))
                .body(containsString("ledgerline_transfers_open{status=\"reconciling\""))
                .body(containsString("ledgerline_transfers_oldest_open_age_seconds"));
    }

    @Test
    void aParkedTransferIsCountedApartAndNeitherAgesNorCountsAsAnOpenTransfer() {
        // parked a month ago: as long as it counted as open, the oldest open age stayed above any stuck threshold
        String id = Rows.parked("parked-owner", "reconciling", 30 * 24 * 60);
        Db.update("UPDATE transfers SET next_attempt_at = 'infinity' WHERE id = ?::uuid", id);
        // (a transfer scheduled for later is not worked on yet, and one whose time has come is due since then)
        String working = "status IN ('pending', 'processing', 'reconciling') AND NOT (status = 'reconciling' AND next_attempt_at = 'infinity')"
                + " AND NOT (status = 'pending' AND coalesce(execute_at > now(), false))";

        // the gauges are read from the database every 10 s; each poll compares them with the rows as they are then
        Awaitility.await("the gauges see the parked transfer").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500))
                .untilAsserted(() -> {
                    String page = Metrics.scrape();
                    long oldestWorking = Db.count("SELECT greatest(0, coalesce(extract(epoch FROM now() - min(greatest(created_at, execute_at))), 0))::bigint FROM transfers WHERE "
                            + working);
                    double oldest = Metrics.sum(page, "ledgerline_transfers_oldest_open_age_seconds", "");
                    assertTrue(oldest < Duration.ofDays(29).toSeconds() && Math.abs(oldest - oldestWorking) <= 30,
                            "the oldest open age is that of the oldest transfer still worked on (" + oldestWorking + " s), not the parked one: " + oldest);
                    assertEquals(Db.count("SELECT count(*) FROM transfers WHERE status = 'reconciling' AND next_attempt_at < 'infinity'"),
                            (long) Metrics.sum(page, "ledgerline_transfers_open", "status=\"reconciling\""),
                            "reconciling transfers the reconciler still works on");
                    assertEquals(Db.count("SELECT count(*) FROM transfers WHERE status = 'reconciling' AND next_attempt_at = 'infinity'"),
                            (long) Metrics.sum(page, "ledgerline_transfers_parked", ""), "parked transfers, this one among them");
                });
        assertTrue(Metrics.scrape().contains("# HELP ledgerline_transfers_parked "), "the parked gauge says what it counts");
    }

    /** The highest Flyway version in src/main/resources/db/migration: readiness must report the schema fully migrated. */
    private static String latestMigration() throws java.io.IOException {
        try (var files = java.nio.file.Files.list(java.nio.file.Path.of("src/main/resources/db/migration"))) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.matches("V\\d+__.*\\.sql"))
                    .mapToInt(n -> Integer.parseInt(n.substring(1, n.indexOf("__")))).max().stream()
                    .mapToObj(Integer::toString).findFirst().orElseThrow();
        }
    }
}
