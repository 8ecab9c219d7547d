package dev.ledgerline.transfers.faults;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledgerline.devstack.sandbox.SandboxLedger;
import org.awaitility.Awaitility;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The owner's cancel and the pipeline's claim racing for the same row across instances. Transfers are scheduled
 * through all three instances to fall due 40 ms apart, and each is cancelled through an instance other than the one
 * that accepted it, between 200 ms before and 700 ms after its instant, while every instance's sweeper (one tick a
 * second each) claims the rows as they fall due. So some cancels reach PostgreSQL before the claim, some after, and
 * some together with it, and the claims are shared by the instances. Each transfer must end
 * {@code cancelled} with no execution at the provider and a 200, or {@code sent} with exactly one execution and a
 * 409 {@code transfer-not-cancellable} — never both — and the provider does not deduplicate, so a send after a
 * cancel would show as an execution.
 */
final class CancelRace {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String NOT_CANCELLABLE = "https://ledgerline.dev/problems/transfer-not-cancellable";
    private static final Duration ANSWER = Duration.ofSeconds(10);
    /** How far apart the transfers fall due. */
    private static final Duration STEP = Duration.ofMillis(40);

    /** What the race came to: how many of each end, and how many sent ones an instance other than the canceller claimed. */
    record Result(int cancelled, int sent, int claimedElsewhere, Map<String, Integer> claimsByInstance) {
        String row() {
            return "cancel-race: " + cancelled + " cancelled, " + sent + " sent of " + (cancelled + sent)
                    + "; sent ones claimed by another instance than the canceller " + claimedElsewhere
                    + "; claims by " + claimsByInstance;
        }
    }

    private final List<ServiceInstance> instances;
    private final SandboxLedger provider;
    private final String jdbcUrl;
    private final String user;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2))
            .version(HttpClient.Version.HTTP_1_1).build();

    CancelRace(List<ServiceInstance> instances, SandboxLedger provider, String jdbcUrl, String user) {
        this.instances = instances;
        this.provider = provider;
        this.jdbcUrl = jdbcUrl;
        this.user = user;
    }

    Result run(String token, int transfers) throws Exception {
        Instant first = Instant.now().plusSeconds(8).truncatedTo(ChronoUnit.MILLIS);
        List<String> ids = ScenarioTransfers.create(instances, http, token, transfers,
                i -> ScenarioTransfers.body(7000 + i, "cancel race", ", \"executeAt\": \"" + first.plus(STEP.multipliedBy(i)) + "\""),
                "cancel-race");
        assertTrue(Instant.now().isBefore(first.minusMillis(500)),
                "cancel-race: every transfer created before its time, or the race is not one");

        // transfer i falls due STEP * i after the first, so the three sweepers' ticks share the claims; its cancel
        // leaves between 200 ms before and 700 ms after that instant, through the instance after the one that accepted it
        long t0 = System.nanoTime() + Duration.between(Instant.now(), first).toNanos();
        ExecutorService cancellers = Executors.newFixedThreadPool(12);
        Map<String, HttpResponse<String>> cancels = new HashMap<>();
        Map<String, String> cancelledThrough = new HashMap<>();
        try {
            List<Future<HttpResponse<String>>> answers = new ArrayList<>();
            for (int i = 0; i < ids.size(); i++) {
                String id = ids.get(i);
                ServiceInstance through = instances.get((i + 1) % instances.size());
                cancelledThrough.put(id, through.id);
                long leaveAt = t0 + i * STEP.toNanos() + Duration.ofMillis(100L * (i % 10) - 200).toNanos();
                answers.add(cancellers.submit(() -> {
                    parkUntil(leaveAt);
                    return send(HttpRequest.newBuilder(URI.create(through.url() + "/v1/transfers/" + id + "/cancel"))
                            .header("Authorization", "Bearer " + token).timeout(ANSWER)
                            .POST(HttpRequest.BodyPublishers.noBody()).build());
                }));
            }
            for (int i = 0; i < ids.size(); i++) {
                cancels.put(ids.get(i), answers.get(i).get(30, TimeUnit.SECONDS));
            }
        } finally {
            cancellers.shutdownNow();
        }

        Awaitility.await("cancel-race: every transfer cancelled or sent").atMost(Duration.ofSeconds(45))
                .pollInterval(Duration.ofMillis(250))
                .until(() -> rows(ids).values().stream().allMatch(r -> r.status.equals("cancelled") || r.status.equals("sent")));

        int cancelled = 0;
        int sent = 0;
        int claimedElsewhere = 0;
        Map<String, Integer> claimsBy = new TreeMap<>();
        Map<String, Row> rows = rows(ids);
        for (String id : ids) {
            Row row = rows.get(id);
            long executions = provider.executions(row.reference);
            HttpResponse<String> answer = cancels.get(id);
            JsonNode body = JSON.readTree(answer.body());
            if (row.status.equals("cancelled")) {
                cancelled++;
                assertEquals(0, executions, "cancel-race: a cancelled transfer was executed: " + id);
                assertEquals(List.of("pending", "cancelled"), row.history, "cancel-race: cancelled, never claimed: " + id);
                assertEquals(200, answer.statusCode(), "cancel-race: the cancel that won answered 200: " + id + " " + answer.body());
                assertEquals("cancelled", body.path("status").asText(), "cancel-race: the 200 shows the cancelled transfer");
            } else {
                sent++;
                assertEquals(1, executions, "cancel-race: a sent transfer was executed exactly once: " + id);
                assertTrue(row.history.size() >= 3 && row.history.get(1).equals("processing") && !row.history.contains("cancelled"),
                        "cancel-race: claimed, never cancelled: " + id + " " + row.history);
                assertEquals(409, answer.statusCode(), "cancel-race: the cancel that lost answered 409: " + id + " " + answer.body());
                assertEquals(NOT_CANCELLABLE, body.path("type").asText(), "cancel-race: the 409's type");
                claimsBy.merge(row.claimedBy, 1, Integer::sum);
                if (!row.claimedBy.equals(cancelledThrough.get(id))) {
                    claimedElsewhere++;
                }
            }
        }
        Result result = new Result(cancelled, sent, claimedElsewhere, claimsBy);
        assertTrue(cancelled > 0 && sent > 0, "cancel-race: both sides won some races: " + result.row());
        assertTrue(claimedElsewhere > 0, "cancel-race: no claim was made by an instance other than the canceller: " + result.row());
        return result;
    }

    private HttpResponse<String> send(HttpRequest request) throws Exception {
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    private record Row(String status, String reference, List<String> history, String claimedBy) {
    }

    /** Each transfer's status, provider reference, statuses in version order, and who made version 1 (the claim). */
    private Map<String, Row> rows(List<String> ids) throws SQLException {
        Map<String, Row> rows = new HashMap<>();
        try (Connection c = DriverManager.getConnection(jdbcUrl, user, "");
             PreparedStatement st = c.prepareStatement("""
                     SELECT t.id::text AS id, t.status, t.provider_reference,
                            array_agg(e.to_status ORDER BY e.version) AS history,
                            max(e.actor) FILTER (WHERE e.version = 1) AS claimed_by
                       FROM transfers t JOIN transfer_events e ON e.transfer_id = t.id
                      WHERE t.id = ANY (?::uuid[])
                      GROUP BY t.id, t.status, t.provider_reference""")) {
            st.setArray(1, c.createArrayOf("text", ids.toArray(String[]::new)));
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    rows.put(rs.getString("id"), new Row(rs.getString("status"), rs.getString("provider_reference"),
                            List.of((String[]) rs.getArray("history").getArray()), rs.getString("claimed_by")));
                }
            }
        }
        assertEquals(ids.size(), rows.size(), "cancel-race: every scheduled transfer has its row");
        return rows;
    }

    /** The moment one cancel leaves (a start time for a move of the race, not a wait for a result). */
    private static void parkUntil(long nanoTime) {
        for (long left = nanoTime - System.nanoTime(); left > 0; left = nanoTime - System.nanoTime()) {
            LockSupport.parkNanos(left);
        }
    }
}
