package dev.ledgerline.transfers.faults;

import com.fasterxml.jackson.databind.ObjectMapper;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Creates a scenario's transfers through the instances in turn, six at a time, each under a fresh key. */
final class ScenarioTransfers {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration ANSWER = Duration.ofSeconds(10);

    private ScenarioTransfers() {
    }

    /** A POST body for a transfer of {@code amount} with the scenario's {@code extra} JSON members (may be empty). */
    static String body(long amount, String description, String extra) {
        return """
                {"amount": %d, "currency": "EUR", "destination": {"iban": "DE89370400440532013000", "name": "Ada Lovelace"}, \
                "description": "%s"%s}""".formatted(amount, description, extra);
    }

    /** Transfer {@code i} has the body {@code bodyOf(i)}; every one must be answered 201. Their ids, in order. */
    static List<String> create(List<ServiceInstance> instances, HttpClient http, String token, int transfers,
                               IntFunction<String> bodyOf, String scenario) throws Exception {
        ExecutorService creators = Executors.newFixedThreadPool(6);
        try {
            List<Future<HttpResponse<String>>> created = new ArrayList<>();
            for (int i = 0; i < transfers; i++) {
                ServiceInstance through = instances.get(i % instances.size());
                HttpRequest request = HttpRequest.newBuilder(URI.create(through.url() + "/v1/transfers"))
                        .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                        .header("Idempotency-Key", UUID.randomUUID().toString()).timeout(ANSWER)
                        .POST(HttpRequest.BodyPublishers.ofString(bodyOf.apply(i))).build();
                created.add(creators.submit(() -> http.send(request, HttpResponse.BodyHandlers.ofString())));
            }
            List<String> ids = new ArrayList<>();
            for (Future<HttpResponse<String>> answer : created) {
                HttpResponse<String> response = answer.get(30, TimeUnit.SECONDS);
                assertEquals(201, response.statusCode(), scenario + ": created: " + response.body());
                ids.add(JSON.readTree(response.body()).path("id").asText());
            }
            return ids;
        } finally {
            creators.shutdownNow();
        }
    }
}
