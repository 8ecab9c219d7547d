package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.problem.ProblemType;
import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Await;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.Management;
import dev.ledgerline.transfers.support.Metrics;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static dev.ledgerline.transfers.support.Api.as;
import static dev.ledgerline.transfers.support.Api.newKey;
import static dev.ledgerline.transfers.support.Api.writer;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.containsString;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The findings of a black-box review, each shown from outside: durations, text encoding, duplicated headers,
 * 405 and OPTIONS, bounded metric series, the per-principal cap on held polls, and roles instead of hosts
 * in the event history.
 */
@QuarkusTest
class HardeningTest {

    private static final String TRANSFERS_PROBLEM = "application/problem+json";

    @TestHTTPResource("/")
    URL base;

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

    @Test
    void invalidUtf8IsA400AndTwoDifferentBodiesNeverBecomeOneTransfer() {
        String token = writer("encoding");
        String key = newKey();
        for (byte bad : new byte[] {(byte) 0xff, (byte) 0xfe}) {
            byte[] body = utf8Body("Ada X");
            body[indexOf(body, (byte) 'X')] = bad;
            as(token).contentType("application/json").header("Idempotency-Key", key).body(body).post("/v1/transfers").then()
                    .statusCode(400).contentType(TRANSFERS_PROBLEM)
                    .body("type", equalTo(ProblemType.BASE + "malformed-request"))
                    .header("Idempotent-Replayed", org.hamcrest.Matchers.nullValue());
        }
        assertEquals(0, Db.count("SELECT count(*) FROM transfers WHERE idempotency_key = ?", key));
    }

    @Test
    void aCharsetOtherThanUtf8IsA415AndUtf8IsAccepted() {
        String token = writer("charset");
        String key = newKey();
        as(token).contentType("application/json; charset=iso-8859-1").header("Idempotency-Key", key)
                .body(Api.body(10).getBytes(StandardCharsets.ISO_8859_1)).post("/v1/transfers").then()
                .statusCode(415).contentType(TRANSFERS_PROBLEM)
                .body("type", equalTo(ProblemType.BASE + "unsupported-media-type"));
        assertEquals(0, Db.count("SELECT count(*) FROM transfers WHERE idempotency_key = ?", key));
        as(token).contentType("application/json; charset=UTF-8").header("Idempotency-Key", newKey())
                .body(utf8Body("Zoë Ångström")).post("/v1/transfers").then()
                .statusCode(201).body("destination.name", equalTo("Zoë Ångström"));
    }

    @Test
    void beneficiaryNamesRefuseFormatCharactersAndStackedMarks() {
        String token = writer("spoof");
        List<String> spoofs = List.of(
                "Ada \u202EecalevoL",       // right-to-left override
                "Ada\u200BLovelace",        // zero-width space
                "Ada\u2066Lovelace\u2069",  // bidi isolate
                "\uFEFFAda Lovelace",       // zero-width no-break space
                "Ada\u00ADLovelace",        // soft hyphen
                "Ada" + "\u0301".repeat(139));
        for (String name : spoofs) {
            String key = newKey();
            as(token).contentType("application/json").header("Idempotency-Key", key).body(utf8Body(name)).post("/v1/transfers").then()
                    .statusCode(400).contentType(TRANSFERS_PROBLEM).body("errors.field", hasItem("destination.name"));
            assertEquals(0, Db.count("SELECT count(*) FROM transfers WHERE idempotency_key = ?", key));
        }
        // decomposed accents are real text: a mark or two per letter is fine
        as(token).contentType("application/json").header("Idempotency-Key", newKey()).body(utf8Body("Nguye\u0302\u0303n Zoe\u0308"))
                .post("/v1/transfers").then().statusCode(201);
    }

    @Test
    void aDuplicatedIdempotencyKeyIsA400() {
        String key = newKey();
        as(writer("two-keys")).contentType("application/json").header("Idempotency-Key", key).header("Idempotency-Key", newKey())
                .body(Api.body(10)).post("/v1/transfers").then()
                .statusCode(400).contentType(TRANSFERS_PROBLEM)
                .body("type", equalTo(ProblemType.BASE + "idempotency-key-invalid"));
        assertEquals(0, Db.count("SELECT count(*) FROM transfers WHERE idempotency_key = ?", key));
    }

    /** Methods the contract does not list, so sent past REST Assured's contract check, with a plain client. */
    @Test
    void a405NamesTheAllowedMethodsAndOptionsAnswersThem() throws Exception {
        String token = writer("methods");
        String id = UUID.randomUUID().toString();
        HttpClient client = HttpClient.newHttpClient();
        assertAnswer(client, "DELETE", "/v1/transfers", token, 405, AllowedMethods.COLLECTION);
        assertAnswer(client, "PUT", "/v1/transfers/" + id, token, 405, AllowedMethods.ITEM);
        assertAnswer(client, "POST", "/v1/transfers/" + id, token, 405, AllowedMethods.ITEM);
        assertAnswer(client, "DELETE", "/v1/transfers/" + id + "/events", token, 405, AllowedMethods.ITEM);
        assertAnswer(client, "RTLONG", "/v1/transfers", null, 405, AllowedMethods.COLLECTION);
        assertAnswer(client, "OPTIONS", "/v1/transfers", null, 204, AllowedMethods.COLLECTION);
        assertAnswer(client, "OPTIONS", "/v1/transfers/" + id, null, 204, AllowedMethods.ITEM);
        // HEAD is GET without a body: the same status, authorization included
        assertAnswer(client, "HEAD", "/v1/transfers/" + id, null, 401, null);
        assertAnswer(client, "HEAD", "/v1/transfers/" + id, token, 404, null);
    }

    private void assertAnswer(HttpClient client, String method, String path, String token, int status, String allow) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base.toString()).resolve(path))
                .method(method, HttpRequest.BodyPublishers.noBody());
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        HttpResponse<String> answer = client.send(request.build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(status, answer.statusCode(), method + " " + path + ": " + answer.body());
        if (allow != null) {
            assertEquals(allow, answer.headers().firstValue("Allow").orElse(null), method + " " + path);
        }
        if (status == 405) {
            assertEquals(TRANSFERS_PROBLEM, answer.headers().firstValue("Content-Type").orElse(""));
        }
    }

    @Test
    void aThousandJunkMethodsAndPathsLeaveTheMetricSeriesCountUnchanged() throws Exception {
        HttpClient client = HttpClient.newHttpClient();
        Random random = new Random(20);
        String transferId = UUID.randomUUID().toString();
        junk(client, random, 50, transferId); // the first junk may add its one OTHER / UNMATCHED series
        long before = httpSeries(Metrics.scrape());
        junk(client, random, 1000, transferId);
        String after = Metrics.scrape();
        assertEquals(before, httpSeries(after), "HTTP server series after 1,000 junk requests");
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

    private static long httpSeries(String metrics) {
        return metrics.lines().filter(l -> l.startsWith("http_server_")).count();
    }

    /**
     * Twelve polls at once from one principal: none of them can end before the transfer changes, so exactly ten
     * are held and exactly two are refused with 429, whatever order they arrive in.
     */
    @Test
    void oneAPrincipalHoldsAtMostItsShareOfLongPolls() throws Exception {
        String token = writer("greedy-poller");
        String id = LongPollProdTimeoutsTest.parkedPending("greedy-poller");
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
        String theirs = LongPollProdTimeoutsTest.parkedPending("patient-poller");
        as(other).header("Prefer", "wait=1").header("If-None-Match", "\"0\"").get("/v1/transfers/" + theirs).then().statusCode(304);
        // the change answers the ten held ones at once; then the principal may poll again
        Db.update("UPDATE transfers SET status = 'failed', version = version + 1, failure_reason = 'test', "
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

    private static byte[] utf8Body(String name) {
        return ("{\"amount\": 10, \"currency\": \"EUR\", \"destination\": {\"iban\": \"" + Api.IBAN + "\", \"name\": \""
                + name + "\"}}").getBytes(StandardCharsets.UTF_8);
    }

    private static int indexOf(byte[] bytes, byte b) {
        for (int i = 0; i < bytes.length; i++) {
            if (bytes[i] == b) {
                return i;
            }
        }
        throw new IllegalArgumentException("not found");
    }
}
