package dev.ledgerline.transfers.faults;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A consumer of {@code GET /v1/events} while a scenario runs: held requests ({@code Prefer: wait=1}), each to the
 * next instance, always passing the last {@code nextCursor}, shrugging off instances that are down, paused or
 * answering 503. After the scenario it reads to the end, and {@link #problems} compares what it saw with
 * {@code transfer_events}: every (transfer, version) of the scenario once, each transfer's in version order.
 */
final class FeedFollower {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** One event as seen: which transfer, which version. */
    record Seen(String transferId, long version) {
    }

    private final List<ServiceInstance> instances;
    private final String token;
    private final String prefix;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofMillis(500))
            .version(HttpClient.Version.HTTP_1_1).build();
    private final List<Seen> seen = new ArrayList<>();
    private final AtomicBoolean stop = new AtomicBoolean();
    private String cursor;
    private int next;
    private int failedRequests;
    private Thread thread;

    /** {@code prefix}: the scenario's principals; events of other principals are read past and not kept. */
    FeedFollower(List<ServiceInstance> instances, String token, String prefix) {
        this.instances = instances;
        this.token = token;
        this.prefix = prefix;
    }

    /** Reads to the current end of the feed (what earlier scenarios left), then follows it in the background. */
    void start() {
        drain(Duration.ofSeconds(30));
        seen.clear();
        thread = new Thread(() -> {
            while (!stop.get()) {
                poll(1);
            }
        }, "feed-follower");
        thread.setDaemon(true);
        thread.start();
    }

    /** Stops following and reads what is left, until two empty pages in a row or the deadline. */
    void finish(Duration deadline) throws InterruptedException {
        stop.set(true);
        thread.join(10_000);
        drain(deadline);
    }

    private void drain(Duration deadline) {
        long until = System.nanoTime() + deadline.toNanos();
        int empty = 0;
        while (empty < 2 && System.nanoTime() < until) {
            int n = poll(0);
            empty = n == 0 ? empty + 1 : 0;
        }
    }

    /** One request; the number of events it answered, or -1 when no instance answered it. */
    private int poll(int waitSeconds) {
        ServiceInstance instance = instances.get(Math.floorMod(next++, instances.size()));
        String query = "?limit=500" + (cursor == null ? "" : "&after=" + URLEncoder.encode(cursor, StandardCharsets.US_ASCII));
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(instance.url() + "/v1/events" + query))
                .timeout(Duration.ofSeconds(waitSeconds + 3)).header("Authorization", "Bearer " + token).GET();
        if (waitSeconds > 0) {
            request.header("Prefer", "wait=" + waitSeconds);
        }
        try {
            HttpResponse<String> r = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                failedRequests++;
                pause();
                return -1;
            }
            JsonNode page = JSON.readTree(r.body());
            int n = 0;
            for (JsonNode e : page.path("events")) {
                n++;
                if (e.path("principal").asText().startsWith(prefix)) {
                    seen.add(new Seen(e.path("transferId").asText(), e.path("version").asLong()));
                }
            }
            if (!page.path("nextCursor").isNull()) {
                cursor = page.path("nextCursor").asText();
            }
            return n;
        } catch (Exception down) {
            failedRequests++;
            pause();
            return -1;
        }
    }

    private static void pause() {
        try {
            Thread.sleep(100);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** What differs between the feed as followed and {@code committed}, the scenario's rows of transfer_events. */
    List<String> problems(Map<String, List<Long>> committed) {
        List<String> problems = new ArrayList<>();
        Map<String, List<Long>> followed = new HashMap<>();
        Set<Seen> once = new HashSet<>();
        for (Seen s : seen) {
            if (!once.add(s)) {
                problems.add("event " + s + " seen twice");
            }
            followed.computeIfAbsent(s.transferId(), k -> new ArrayList<>()).add(s.version());
        }
        for (Map.Entry<String, List<Long>> t : committed.entrySet()) {
            List<Long> got = followed.getOrDefault(t.getKey(), List.of());
            if (!got.equals(t.getValue())) {
                problems.add("transfer " + t.getKey() + ": committed versions " + t.getValue() + ", followed " + got);
            }
        }
        for (String t : followed.keySet()) {
            if (!committed.containsKey(t)) {
                problems.add("transfer " + t + " followed but has no committed event");
            }
        }
        return problems;
    }

    int events() {
        return seen.size();
    }

    int failedRequests() {
        return failedRequests;
    }
}
