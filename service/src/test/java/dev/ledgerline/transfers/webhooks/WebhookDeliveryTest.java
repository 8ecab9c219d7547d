package dev.ledgerline.transfers.webhooks;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledgerline.transfers.hashing.HmacSha256;
import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Await;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.Metrics;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.sql.Timestamp;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Webhooks end to end, against a real receiver on 127.0.0.1 (no mock of either side): registration, signatures,
 * at-least-once delivery through 500s and a receiver that is down for a while, each transfer's versions in order,
 * growing back-off, one attempt at a time per endpoint, an endpoint marked failing, a lease held by an instance that
 * died. The test profile's back-off is 0.2 s doubling to 1.6 s, give-up after 6 s, lease 5 s.
 */
@QuarkusTest
class WebhookDeliveryTest {

    private static final Duration DEADLINE = Duration.ofSeconds(60);
    private static final Pattern SIGNATURE = Pattern.compile("t=(\\d+),v1=([0-9a-f]{64})");
    private static final ObjectMapper JSON = new ObjectMapper();

    @Inject
    WebhookDeliverer deliverer;

    @Inject
    WebhookRepository repository;

    static String admin() {
        return Api.token("hooks-admin", List.of("webhooks.admin"));
    }

    /** Registers {@code url}: the 201's id and secret. */
    static Map<String, String> register(String url) {
        Response r = Api.as(admin()).contentType(ContentType.JSON)
                .body(Map.of("url", url, "description", "test receiver")).post("/v1/webhook-endpoints");
        r.then().statusCode(201);
        String id = r.path("id");
        String secret = r.path("secret");
        assertTrue(secret.startsWith("whsec_"), secret);
        assertEquals("/v1/webhook-endpoints/" + id, java.net.URI.create(r.header("Location")).getPath());
        return Map.of("id", id, "secret", secret);
    }

    static void remove(String id) {
        Api.as(admin()).delete("/v1/webhook-endpoints/" + id).then().statusCode(204);
    }

    /** Every event the feed holds of these transfers, as "transfer.version", once all of them are final. */
    static Set<String> eventsOf(List<String> transfers) {
        Await.allTerminal(transfers, DEADLINE);
        Set<String> ids = new HashSet<>();
        for (String t : transfers) {
            for (Map<String, Object> row : Db.query("SELECT version FROM transfer_events WHERE transfer_id = ?::uuid", t)) {
                ids.add(t + "." + row.get("version"));
            }
        }
        return ids;
    }

    @Test
    void aRotatedSecretSignsBesideTheNewOneUntilItExpires() throws Exception {
        try (Receiver receiver = new Receiver(0, 0)) {
            Map<String, String> endpoint = register(receiver.url());
            String id = endpoint.get("id");
            String first = endpoint.get("secret");
            String writer = Api.writer("hooks-rotation");
            try {
                List<Receiver.Received> before = deliveredOf(receiver, Api.create(writer, 7_101));
                for (Receiver.Received r : before) {
                    assertEquals(List.of(true), verifies(r, first), "one v1, the first secret's: " + r.signature());
                }

                Response rotated = Api.as(admin()).post("/v1/webhook-endpoints/" + id + "/secret");
                rotated.then().statusCode(200);
                String second = rotated.path("secret");
                assertTrue(second.startsWith("whsec_") && !second.equals(first), second);
                java.time.OffsetDateTime until = java.time.OffsetDateTime.parse(rotated.path("previousSecretExpiresAt"));
                assertTrue(Math.abs(Duration.between(java.time.OffsetDateTime.now().plusHours(24), until).toSeconds()) < 120,
                        "the replaced secret signs for 24 h: " + until);

                // during the overlap each delivery carries both, and a receiver holding either secret accepts it
                for (Receiver.Received r : deliveredOf(receiver, Api.create(writer, 7_102))) {
                    assertEquals(2, r.signature().split("v1=", -1).length - 1, r.signature());
                    assertTrue(dev.ledgerline.sdk.WebhookSignatures.verifySignature(second, r.signature(), r.body(), 300), r.signature());
                    assertTrue(dev.ledgerline.sdk.WebhookSignatures.verifySignature(first, r.signature(), r.body(), 300), r.signature());
                }

                // once it expires, only the new secret signs
                Db.update("UPDATE webhook_endpoints SET previous_secret_expires_at = now() - interval '1 second' WHERE id = ?::uuid", id);
                for (Receiver.Received r : deliveredOf(receiver, Api.create(writer, 7_103))) {
                    assertEquals(List.of(true), verifies(r, second), r.signature());
                    assertFalse(dev.ledgerline.sdk.WebhookSignatures.verifySignature(first, r.signature(), r.body(), 300), r.signature());
                }
            } finally {
                remove(id);
            }
            Api.as(admin()).post("/v1/webhook-endpoints/" + id + "/secret").then().statusCode(404);
            Api.as(writer).post("/v1/webhook-endpoints/" + UUID.randomUUID() + "/secret").then().statusCode(403);
        }
    }

    /** The deliveries of every event of {@code transfer}, once it is final and all of them arrived. */
    private static List<Receiver.Received> deliveredOf(Receiver receiver, String transfer) {
        Set<String> events = eventsOf(List.of(transfer));
        Awaitility.await().atMost(DEADLINE).until(() -> receiver.delivered().stream().map(Receiver.Received::eventId)
                .collect(java.util.stream.Collectors.toSet()).containsAll(events));
        return receiver.delivered().stream().filter(r -> events.contains(r.eventId())).toList();
    }

    /** For each v1 of the delivery's signature, whether it is the HMAC under {@code secret}. */
    private static List<Boolean> verifies(Receiver.Received r, String secret) {
        String t = r.signature().substring(2, r.signature().indexOf(','));
        String mac = new HmacSha256(secret).hex(t + "." + r.body());
        List<Boolean> matches = new ArrayList<>();
        for (String part : r.signature().split(",")) {
            if (part.startsWith("v1=")) {
                matches.add(part.substring(3).equals(mac));
            }
        }
        return matches;
    }

    @Test
    void everyEventArrivesSignedAndInOrderThroughFailuresAndAnOutage() throws Exception {
        try (Receiver receiver = new Receiver(Integer.MAX_VALUE, 20)) {
            Map<String, String> endpoint = register(receiver.url());
            String writer = Api.writer("hooks-writer");
            List<String> transfers = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                transfers.add(Api.create(writer, 7_000 + i));
            }
            // 500s first
            Awaitility.await().atMost(DEADLINE).until(() -> receiver.received.size() >= 3);
            receiver.stop();
            // then down: refused connections, recorded as attempts without a status
            Awaitility.await().atMost(DEADLINE).until(() -> Db.count("SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = ?::uuid"
                    + " AND status_code IS NULL", endpoint.get("id")) >= 3);
            receiver.startAgain();

            Set<String> expected = eventsOf(transfers);
            assertTrue(expected.size() >= transfers.size() * 3, "created, processing, sent per transfer: " + expected);
            Awaitility.await().atMost(DEADLINE).until(() -> receiver.delivered().stream().map(Receiver.Received::eventId)
                    .collect(java.util.stream.Collectors.toSet()).containsAll(expected));

            // signed with the secret from the 201, over the exact body, recently; the header names the body's event
            HmacSha256 hmac = new HmacSha256(endpoint.get("secret"));
            Map<String, List<Long>> versions = new HashMap<>();
            for (Receiver.Received r : receiver.received) {
                Matcher m = SIGNATURE.matcher(r.signature());
                assertTrue(m.matches(), r.signature());
                assertEquals(hmac.hex(m.group(1) + "." + r.body()), m.group(2), "signature of " + r.eventId());
                assertTrue(Math.abs(Long.parseLong(m.group(1)) - r.atMillis() / 1000) <= 300, "timestamp of " + r.eventId());
                JsonNode body = JSON.readTree(r.body());
                assertEquals(r.eventId(), body.get("id").asText());
                assertEquals(r.eventId(), body.get("transferId").asText() + "." + body.get("version").asLong());
                for (String field : List.of("fromStatus", "toStatus", "at", "actor", "principal", "amount", "currency",
                        "destination", "createdAt")) {
                    assertTrue(body.has(field), field + " in " + r.body());
                }
                versions.computeIfAbsent(body.get("transferId").asText(), k -> new ArrayList<>()).add(body.get("version").asLong());
            }
            // per transfer, in version order: a retry repeats a version, never goes back to an earlier one
            for (String t : transfers) {
                List<Long> seen = versions.get(t);
                assertNotNull(seen, "events of " + t);
                for (int i = 1; i < seen.size(); i++) {
                    assertTrue(seen.get(i) >= seen.get(i - 1), t + " arrived as " + seen);
                }
            }
            assertEquals(1, receiver.maxInFlight.get(), "one attempt at a time per endpoint");

            // retries of the event that failed spaced by growing back-off: at least the jitter's floor each time
            List<Map<String, Object>> attempts = Db.query("SELECT event_id, attempt, status_code, at FROM webhook_deliveries"
                    + " WHERE endpoint_id = ?::uuid ORDER BY id", endpoint.get("id"));
            String first = (String) attempts.get(0).get("event_id");
            List<Long> at = new ArrayList<>();
            for (Map<String, Object> a : attempts) {
                if (a.get("event_id").equals(first)) {
                    at.add(((Timestamp) a.get("at")).getTime());
                }
            }
            assertTrue(at.size() >= 6, "three 500s and three refusals of the first event at least: " + attempts);
            List<Long> gaps = new ArrayList<>();
            for (int i = 1; i < at.size(); i++) {
                gaps.add(at.get(i) - at.get(i - 1));
            }
            for (int k = 1; k <= gaps.size() - 1; k++) { // the last gap ends in the success after the outage
                long floor = Math.min(200L << (k - 1), 1600L) / 2;
                assertTrue(gaps.get(k - 1) >= floor - 20, "gap " + k + " of " + gaps + " below the back-off floor " + floor);
            }
            assertTrue(gaps.get(3) > gaps.get(0) * 3 / 2, "the back-off grows: " + gaps);
            System.out.printf("webhooks: %d requests for %d events, %d attempts at the first event, gaps %s ms, max in flight %d%n",
                    receiver.received.size(), expected.size(), at.size(), gaps, receiver.maxInFlight.get());

            // the attempts as the API shows them: 500s with their error, refusals without a status, then 2xx
            Response deliveries = Api.as(admin()).get("/v1/webhook-endpoints/" + endpoint.get("id") + "/deliveries");
            deliveries.then().statusCode(200);
            List<Map<String, Object>> items = deliveries.path("items");
            assertTrue(items.stream().anyMatch(d -> Integer.valueOf(500).equals(d.get("statusCode"))
                    && String.valueOf(d.get("error")).startsWith("HTTP 500")), items.toString());
            assertTrue(items.stream().anyMatch(d -> d.get("statusCode") == null && d.get("error") != null), items.toString());
            assertTrue(items.stream().anyMatch(d -> Integer.valueOf(200).equals(d.get("statusCode"))), items.toString());

            // the attempts are bounded: pruning keeps the newest (the deliverer prunes to keep-attempts after each lease)
            String newestThree = "SELECT id FROM webhook_deliveries WHERE endpoint_id = ?::uuid ORDER BY id DESC LIMIT 3";
            List<Map<String, Object>> before = Db.query(newestThree, endpoint.get("id"));
            repository.prune(UUID.fromString(endpoint.get("id")), 3).await().atMost(Duration.ofSeconds(10));
            assertEquals(before, Db.query("SELECT id FROM webhook_deliveries WHERE endpoint_id = ?::uuid ORDER BY id DESC",
                    endpoint.get("id")));

            remove(endpoint.get("id"));
            Api.as(admin()).delete("/v1/webhook-endpoints/" + endpoint.get("id")).then().statusCode(404);
            Api.as(admin()).get("/v1/webhook-endpoints/" + endpoint.get("id") + "/deliveries").then().statusCode(404);
        }
    }

    @Test
    void anEndpointThatNeverAnswersIsMarkedFailingAndTheGaugeShowsIt() throws Exception {
        // accepts connections (the kernel's backlog) and never answers: every attempt times out
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Map<String, String> endpoint = register("http://127.0.0.1:" + silent.getLocalPort() + "/never");
            try {
                double markedBefore = Math.max(0, Metrics.sum("ledgerline_webhooks_endpoints_marked_failing_total", ""));
                Api.create(Api.writer("hooks-writer"), 7_100);
                Awaitility.await().atMost(DEADLINE).until(() -> {
                    List<Map<String, Object>> listed = Api.as(admin()).get("/v1/webhook-endpoints").then().statusCode(200)
                            .extract().path("items");
                    return listed.stream().anyMatch(e -> endpoint.get("id").equals(e.get("id")) && Boolean.TRUE.equals(e.get("failing")));
                });
                Awaitility.await().atMost(DEADLINE).until(() -> Metrics.sum("ledgerline_webhooks_endpoints_failing", "") >= 1);
                assertTrue(Metrics.sum("ledgerline_webhooks_endpoints_marked_failing_total", "") >= markedBefore + 1);
                List<Map<String, Object>> timeouts = Db.query("SELECT error, latency_ms FROM webhook_deliveries WHERE endpoint_id = ?::uuid",
                        endpoint.get("id"));
                assertTrue(timeouts.stream().allMatch(t -> String.valueOf(t.get("error")).startsWith("timeout")), timeouts.toString());
            } finally {
                remove(endpoint.get("id"));
            }
            Awaitility.await().atMost(DEADLINE).until(() -> Metrics.sum("ledgerline_webhooks_endpoints_failing", "") == 0);
        }
    }

    @Test
    void deliverersRacingOnOneEndpointSendOneAttemptAtATime() throws Exception {
        try (Receiver receiver = new Receiver(0, 50)) {
            Map<String, String> endpoint = register(receiver.url());
            try {
                String writer = Api.writer("hooks-racer");
                List<String> transfers = new ArrayList<>();
                for (int i = 0; i < 5; i++) {
                    transfers.add(Api.create(writer, 7_200 + i));
                }
                Set<String> expected = eventsOf(transfers);
                // four more deliverers besides the scheduled one, as if on other instances, all at once
                ExecutorService racers = Executors.newFixedThreadPool(4);
                long until = System.nanoTime() + DEADLINE.toNanos();
                List<Future<?>> running = new ArrayList<>();
                for (int r = 0; r < 4; r++) {
                    running.add(racers.submit(() -> {
                        while (System.nanoTime() < until && !receiver.delivered().stream().map(Receiver.Received::eventId)
                                .collect(java.util.stream.Collectors.toSet()).containsAll(expected)) {
                            deliverer.round().await().atMost(Duration.ofSeconds(30));
                        }
                        return null;
                    }));
                }
                for (Future<?> f : running) {
                    f.get(DEADLINE.toSeconds() + 30, TimeUnit.SECONDS);
                }
                racers.shutdown();
                assertTrue(receiver.delivered().stream().map(Receiver.Received::eventId).collect(java.util.stream.Collectors.toSet())
                        .containsAll(expected));
                assertEquals(1, receiver.maxInFlight.get(), "one attempt at a time per endpoint");
                // nothing was sent twice either: every lease-holder moved the cursor before the next send
                List<String> ids = receiver.received.stream().map(Receiver.Received::eventId).toList();
                assertEquals(new HashSet<>(ids).size(), ids.size(), "each event once while nothing failed: " + ids);
            } finally {
                remove(endpoint.get("id"));
            }
        }
    }

    @Test
    void aLeaseHeldByAnInstanceThatDiedIsTakenOverWhenItExpires() throws Exception {
        try (Receiver receiver = new Receiver(0, 0)) {
            Map<String, String> endpoint = register(receiver.url());
            try {
                // another instance leased the endpoint and died mid-delivery: its lease runs 3 s more
                assertEquals(1, Db.update("UPDATE webhook_endpoints SET leased_by = 'instance-that-died', lease_token = ?::uuid,"
                        + " lease_expires_at = now() + interval '3 seconds' WHERE id = ?::uuid", UUID.randomUUID().toString(), endpoint.get("id")));
                long expires = ((Timestamp) Db.query("SELECT lease_expires_at FROM webhook_endpoints WHERE id = ?::uuid",
                        endpoint.get("id")).get(0).get("lease_expires_at")).getTime();
                List<String> transfers = List.of(Api.create(Api.writer("hooks-writer"), 7_300));
                Set<String> expected = eventsOf(transfers);
                Awaitility.await().atMost(DEADLINE).until(() -> receiver.delivered().stream().map(Receiver.Received::eventId)
                        .collect(java.util.stream.Collectors.toSet()).containsAll(expected));
                long firstArrival = receiver.received.stream().mapToLong(Receiver.Received::atMillis).min().orElseThrow();
                assertTrue(firstArrival >= expires - 100, "nothing was sent while the dead instance's lease ran: first at "
                        + firstArrival + ", lease until " + expires);
                assertFalse(Db.query("SELECT 1 FROM webhook_deliveries WHERE endpoint_id = ?::uuid AND instance <> 'instance-that-died'",
                        endpoint.get("id")).isEmpty());
            } finally {
                remove(endpoint.get("id"));
            }
        }
    }

    @Test
    void badEndpointsAreProblems() {
        for (String body : List.of("{\"url\": \"ftp://example.com/hook\"}", "{\"url\": \"not a url\"}", "{\"url\": 42}",
                "{}", "{\"url\": \"http://127.0.0.1:1/x\", \"secret\": \"mine\"}", "[1]")) {
            Api.as(admin()).contentType(ContentType.JSON).body(body).post("/v1/webhook-endpoints").then().statusCode(400)
                    .contentType("application/problem+json");
        }
        Api.as(admin()).contentType(ContentType.JSON).body("{\"url\": ").post("/v1/webhook-endpoints").then().statusCode(400)
                .contentType("application/problem+json");
    }
}
