package dev.ledgerline.transfers.faults;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import dev.ledgerline.transfers.hashing.HmacSha256;
import org.awaitility.Awaitility;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An instance killed while it delivers a webhook. A receiver in this JVM holds every request a moment before it
 * answers 200, so a delivery is on the wire most of the time; one endpoint is registered and transfers are created
 * through the three instances. The instance holding the endpoint's lease is frozen while a request is in flight, seen
 * to still hold the lease with an event the receiver got but the endpoint's cursor never passed (its 2xx was never
 * read), and killed. Another instance must take the endpoint over once the lease expires and deliver every event of
 * those transfers, signed, each transfer's versions first arriving in order, and never two requests at the receiver at
 * once — the killed one's request included: an instance sends only while its lease outlasts the request timeout.
 */
final class WebhookKill {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern SIGNATURE = Pattern.compile("t=(\\d+),v1=([0-9a-f]{64})");
    private static final Duration ANSWER = Duration.ofSeconds(10);
    private static final String SCENARIO = "webhooks-instance-killed";

    /** How the killed instance comes back (as a new actor); called once every event has arrived. */
    interface Restart {
        void of(ServiceInstance killed) throws Exception;
    }

    record Result(int events, int arrivals, int duplicates, int maxInFlight, String holderBefore, Set<String> holdersAfter,
                  Set<String> deliveredAfterBy, String unacknowledgedAtKill, long secondsToAll) {
        String row() {
            return SCENARIO + ": " + events + " events delivered (" + arrivals + " requests), duplicates re-delivered after"
                    + " the kill " + duplicates + " (in flight at the kill: " + unacknowledgedAtKill + "), max in flight "
                    + maxInFlight + ", lease held by " + holderBefore + " before (killed), by " + holdersAfter
                    + " after its lease expired; deliveries after the kill recorded by " + deliveredAfterBy + "; all arrived " + secondsToAll
                    + " s after the kill";
        }
    }

    private final List<ServiceInstance> instances;
    private final String jdbcUrl;
    private final String user;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2))
            .version(HttpClient.Version.HTTP_1_1).build();

    WebhookKill(List<ServiceInstance> instances, String jdbcUrl, String user) {
        this.instances = instances;
        this.jdbcUrl = jdbcUrl;
        this.user = user;
    }

    Result run(String adminToken, String writerToken, int transfers, Duration within, Restart restart) throws Exception {
        try (Receiver receiver = new Receiver(300)) {
            ServiceInstance registrar = instances.get(0);
            HttpResponse<String> created = send(HttpRequest.newBuilder(URI.create(registrar.url() + "/v1/webhook-endpoints"))
                    .header("Authorization", "Bearer " + adminToken).header("Content-Type", "application/json").timeout(ANSWER)
                    .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(
                            Map.of("url", receiver.url(), "description", SCENARIO)))).build());
            assertEquals(201, created.statusCode(), SCENARIO + ": endpoint registered: " + created.body());
            String endpoint = JSON.readTree(created.body()).path("id").asText();
            String secret = JSON.readTree(created.body()).path("secret").asText();
            try {
                return deliver(receiver, endpoint, secret, writerToken, transfers, within, restart);
            } finally {
                assertEquals(204, remove(adminToken, endpoint), SCENARIO + ": endpoint removed");
            }
        }
    }

    private Result deliver(Receiver receiver, String endpoint, String secret, String writerToken, int transfers,
                           Duration within, Restart restart) throws Exception {
        List<String> ids = ScenarioTransfers.create(instances, http, writerToken, transfers,
                i -> ScenarioTransfers.body(9000 + i, "webhook kill", ""), SCENARIO);

        // freeze the lease holder while a request is on the wire; keep it only if it still holds the lease and an
        // event reached the receiver that the endpoint's cursor never passed (the 2xx it will never read)
        ServiceInstance killed = null;
        String unacknowledged = null;
        Lease killedLease = null;
        for (int attempt = 0; attempt < 10 && killed == null; attempt++) {
            String[] holder = new String[1];
            Awaitility.await(SCENARIO + ": a delivery in flight under a lease").atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(5))
                    .until(() -> receiver.inFlight.get() > 0 && (holder[0] = lease(endpoint).holder) != null);
            ServiceInstance candidate = instances.stream().filter(i -> i.id.equals(holder[0])).findFirst().orElseThrow();
            candidate.pause();
            Lease first = lease(endpoint);
            Thread.sleep(600); // longer than the receiver holds a request: the one in flight is answered meanwhile
            Lease later = lease(endpoint);
            Set<String> unacked = new TreeSet<>(receiver.eventIds());
            unacked.removeAll(acknowledged(endpoint));
            if (candidate.id.equals(first.holder) && first.equals(later) && later.unexpired && !unacked.isEmpty()) {
                killed = candidate;
                killedLease = later;
                unacknowledged = String.join(",", unacked);
            } else {
                candidate.resume();
            }
        }
        assertNotNull(killed, SCENARIO + ": never froze a lease holder with a delivery in flight");
        Set<String> seenAtKill = new HashSet<>(receiver.eventIds());
        String holderBefore = killed.id;
        Lease dead = killedLease;
        killed.kill();
        long killedAt = System.nanoTime();

        Set<String> holdersAfter = new TreeSet<>();
        Set<String> expected = new TreeSet<>();
        try {
            Awaitility.await(SCENARIO + ": every event of the transfers arrived").atMost(within).pollInterval(Duration.ofMillis(100))
                    .until(() -> {
                        Lease now = lease(endpoint);
                        if (now.holder != null && !now.token.equals(dead.token)) {
                            holdersAfter.add(now.holder);
                        }
                        if (!allFinished(ids)) {
                            return false;
                        }
                        expected.clear();
                        expected.addAll(events(ids));
                        return receiver.eventIds().containsAll(expected);
                    });
        } finally {
            restart.of(killed);
        }
        long secondsToAll = (System.nanoTime() - killedAt) / 1_000_000_000L;

        // signed with the 201's secret over the exact body; the header and the body name the same event
        HmacSha256 hmac = new HmacSha256(secret);
        Map<String, List<Long>> firstArrivals = new HashMap<>();
        Set<String> seen = new HashSet<>();
        int duplicates = 0;
        List<Received> all = List.copyOf(receiver.received);
        for (int i = 0; i < all.size(); i++) {
            Received r = all.get(i);
            assertNotNull(r.signature, SCENARIO + ": signed: " + r.eventId);
            Matcher m = SIGNATURE.matcher(r.signature);
            assertTrue(m.matches(), SCENARIO + ": signature header " + r.signature);
            assertEquals(hmac.hex(m.group(1) + "." + r.body), m.group(2), SCENARIO + ": signature of " + r.eventId);
            JsonNode body = JSON.readTree(r.body);
            assertEquals(r.eventId, body.path("transferId").asText() + "." + body.path("version").asLong(),
                    SCENARIO + ": the header names the body's event");
            if (seen.add(r.eventId)) {
                firstArrivals.computeIfAbsent(body.path("transferId").asText(), k -> new ArrayList<>()).add(body.path("version").asLong());
            } else {
                duplicates++;
            }
        }
        for (String id : ids) {
            List<Long> versions = firstArrivals.get(id);
            assertNotNull(versions, SCENARIO + ": no event of " + id + " arrived");
            List<Long> sorted = new ArrayList<>(versions);
            sorted.sort(Long::compare);
            assertEquals(sorted, versions, SCENARIO + ": the first arrivals of " + id + " in version order");
        }
        assertTrue(seen.containsAll(expected), SCENARIO + ": every (transfer, version) arrived");
        assertTrue(duplicates > 0, SCENARIO + ": the event in flight at the kill (" + unacknowledged + ") was never sent again");
        // leases taken after the kill (the killed one's own stands until it expires): never the dead instance's
        assertFalse(holdersAfter.isEmpty(), SCENARIO + ": nobody leased the endpoint after " + holderBefore + " was killed");
        assertFalse(holdersAfter.contains(holderBefore), SCENARIO + ": " + holderBefore + " leased the endpoint after it was killed");
        Set<String> deliveredAfterBy = deliveredBy(endpoint, seenAtKill);
        assertFalse(deliveredAfterBy.contains(holderBefore), SCENARIO + ": the killed instance recorded a delivery after the kill");
        assertEquals(1, receiver.maxInFlight.get(), SCENARIO + ": requests at the receiver at once (the killed"
                + " instance's included)");
        assertEquals(0, receiver.cut.get(), SCENARIO + ": requests cut off before their body arrived");
        return new Result(expected.size(), all.size(), duplicates, receiver.maxInFlight.get(), holderBefore, holdersAfter,
                deliveredAfterBy, unacknowledged, secondsToAll);
    }

    /** DELETE through the first instance that answers (the restarted one may not listen yet); the status. */
    private int remove(String adminToken, String endpoint) throws Exception {
        IOException last = null;
        for (ServiceInstance instance : instances) {
            try {
                return send(HttpRequest.newBuilder(URI.create(instance.url() + "/v1/webhook-endpoints/" + endpoint))
                        .header("Authorization", "Bearer " + adminToken).timeout(ANSWER).DELETE().build()).statusCode();
            } catch (IOException notListening) {
                last = notListening;
            }
        }
        throw last;
    }

    private HttpResponse<String> send(HttpRequest request) throws Exception {
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    private record Lease(String holder, String token, boolean unexpired) {
    }

    private Lease lease(String endpoint) throws SQLException {
        try (Connection c = DriverManager.getConnection(jdbcUrl, user, "");
             PreparedStatement st = c.prepareStatement("""
                     SELECT leased_by, lease_token::text, coalesce(lease_expires_at > now(), false)
                       FROM webhook_endpoints WHERE id = ?::uuid""")) {
            st.setString(1, endpoint);
            try (ResultSet rs = st.executeQuery()) {
                assertTrue(rs.next(), SCENARIO + ": the endpoint's row");
                return new Lease(rs.getString(1), rs.getString(2), rs.getBoolean(3));
            }
        }
    }

    /** Events the endpoint recorded a 2xx for (the attempts written with each cursor move). */
    private Set<String> acknowledged(String endpoint) throws SQLException {
        Set<String> ids = new HashSet<>();
        query("SELECT event_id FROM webhook_deliveries WHERE endpoint_id = ?::uuid AND status_code BETWEEN 200 AND 299",
                endpoint, rs -> ids.add(rs.getString(1)));
        return ids;
    }

    /** Who recorded the 2xx of events the receiver had not seen when the kill landed. */
    private Set<String> deliveredBy(String endpoint, Set<String> seenAtKill) throws SQLException {
        Set<String> by = new TreeSet<>();
        query("SELECT event_id, instance FROM webhook_deliveries WHERE endpoint_id = ?::uuid AND status_code BETWEEN 200 AND 299",
                endpoint, rs -> {
                    if (!seenAtKill.contains(rs.getString(1))) {
                        by.add(rs.getString(2));
                    }
                });
        return by;
    }

    private boolean allFinished(List<String> ids) throws SQLException {
        int[] open = new int[1];
        queryArray("SELECT count(*) FROM transfers WHERE id = ANY (?::uuid[]) AND status NOT IN ('sent', 'failed')",
                ids, rs -> open[0] = rs.getInt(1));
        return open[0] == 0;
    }

    /** Every event of the transfers, as the feed names them: "transfer.version". */
    private Set<String> events(List<String> ids) throws SQLException {
        Set<String> events = new LinkedHashSet<>();
        queryArray("SELECT transfer_id::text || '.' || version FROM transfer_events WHERE transfer_id = ANY (?::uuid[])",
                ids, rs -> events.add(rs.getString(1)));
        return events;
    }

    private interface Rows {
        void each(ResultSet rs) throws SQLException;
    }

    private void query(String sql, String param, Rows rows) throws SQLException {
        try (Connection c = DriverManager.getConnection(jdbcUrl, user, ""); PreparedStatement st = c.prepareStatement(sql)) {
            st.setString(1, param);
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    rows.each(rs);
                }
            }
        }
    }

    private void queryArray(String sql, List<String> ids, Rows rows) throws SQLException {
        try (Connection c = DriverManager.getConnection(jdbcUrl, user, ""); PreparedStatement st = c.prepareStatement(sql)) {
            st.setArray(1, c.createArrayOf("text", ids.toArray(String[]::new)));
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    rows.each(rs);
                }
            }
        }
    }

    /** One request as it arrived (recorded before the receiver holds it). */
    private record Received(String eventId, String signature, String body, long atMillis) {
    }

    /**
     * A real receiver on 127.0.0.1: holds each request {@code holdMillis} before it answers 200, records each one as
     * it arrives, and the most requests it was inside at once. A request whose body never fully arrived (its sender
     * died mid-write) is counted as cut.
     */
    private static final class Receiver implements AutoCloseable {
        final ConcurrentLinkedQueue<Received> received = new ConcurrentLinkedQueue<>();
        final AtomicInteger inFlight = new AtomicInteger();
        final AtomicInteger maxInFlight = new AtomicInteger();
        final AtomicInteger cut = new AtomicInteger();
        private final HttpServer server;

        Receiver(long holdMillis) throws IOException {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 50);
            server.setExecutor(Executors.newFixedThreadPool(4, r -> {
                Thread t = new Thread(r, "webhook-kill-receiver");
                t.setDaemon(true);
                return t;
            }));
            server.createContext("/hooks/ledgerline", exchange -> {
                maxInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
                try (InputStream in = exchange.getRequestBody()) {
                    String body;
                    try {
                        body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                    } catch (IOException e) {
                        cut.incrementAndGet();
                        return;
                    }
                    received.add(new Received(exchange.getRequestHeaders().getFirst("Ledgerline-Event-Id"),
                            exchange.getRequestHeaders().getFirst("Ledgerline-Signature"), body, System.currentTimeMillis()));
                    Thread.sleep(holdMillis); // a receiver that takes a moment: a delivery is on the wire when the kill lands
                    byte[] answer = "ok".getBytes(StandardCharsets.UTF_8);
                    exchange.sendResponseHeaders(200, answer.length);
                    exchange.getResponseBody().write(answer);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (IOException senderGone) {
                    // the killed instance's connection: the request was recorded when it arrived
                } finally {
                    inFlight.decrementAndGet();
                    exchange.close();
                }
            });
            server.start();
        }

        String url() {
            return "http://127.0.0.1:" + server.getAddress().getPort() + "/hooks/ledgerline";
        }

        List<String> eventIds() {
            return received.stream().map(Received::eventId).toList();
        }

        @Override
        public void close() {
            server.stop(0);
        }
    }
}
