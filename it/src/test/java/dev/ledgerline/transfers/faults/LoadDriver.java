package dev.ledgerline.transfers.faults;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Mobile-like clients against the instances, bounded in requests and time, only to 127.0.0.1. Each client
 * makes one transfer intent after another: it gives up waiting after a random timeout, resends the same
 * key to a different instance when it got no answer or a 409, sometimes resends a changed body under the
 * same key (a user who edited the amount), sometimes replays a finished request, and sometimes just walks
 * away with the outcome unknown. Every request goes into the {@link History}.
 *
 * <p>Each intent's amounts are its own: its first amount is a multiple of 100 plus a random part below 50, and
 * every edit adds 1, so no two intents of one driver ever send the same amount. An order the provider executed
 * therefore names its intent even when no row holds its reference any more (a database that lost the row).
 */
final class LoadDriver {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final List<ServiceInstance> instances;
    private final Map<String, String> tokens;
    private final History history = new History();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofMillis(300))
            .version(HttpClient.Version.HTTP_1_1).build();
    private final AtomicInteger sent = new AtomicInteger();
    private final AtomicLong intents = new AtomicLong();
    private final int maxRequests;
    private volatile long deadline;

    LoadDriver(List<ServiceInstance> instances, Map<String, String> tokensByPrincipal, int maxRequests) {
        this.instances = instances;
        this.tokens = tokensByPrincipal;
        this.maxRequests = maxRequests;
    }

    History history() {
        return history;
    }

    /** Runs {@code clients} clients until {@code duration} has passed or the request budget is spent. */
    ExecutorService start(int clients, Duration duration) {
        deadline = System.nanoTime() + duration.toNanos();
        ExecutorService pool = Executors.newFixedThreadPool(clients, r -> {
            Thread t = new Thread(r, "load-client");
            t.setDaemon(true);
            return t;
        });
        List<String> principals = List.copyOf(tokens.keySet());
        for (int i = 0; i < clients; i++) {
            String principal = principals.get(i % principals.size());
            pool.submit(() -> client(principal));
        }
        pool.shutdown();
        return pool;
    }

    static void awaitEnd(ExecutorService pool, Duration within) throws InterruptedException {
        if (!pool.awaitTermination(within.toMillis(), TimeUnit.MILLISECONDS)) {
            pool.shutdownNow();
            throw new IllegalStateException("load driver did not stop within " + within);
        }
    }

    private boolean budgetLeft() {
        return System.nanoTime() < deadline && sent.get() < maxRequests;
    }

    private void client(String principal) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        try {
            while (budgetLeft()) {
                intent(principal, random);
                Thread.sleep(random.nextInt(20, 80));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException | Error e) {
            history.clientDied(principal, e); // the checker reports it: a silent death would shrink the run unseen
        }
    }

    /** One transfer intent: first send, then the retries a mobile client makes. */
    private void intent(String principal, ThreadLocalRandom random) throws InterruptedException {
        String key = UUID.randomUUID().toString();
        long amount = intents.incrementAndGet() * 100 + random.nextInt(50); // at most 9 edits follow: still its own
        int instance = random.nextInt(instances.size());
        for (int attempt = 0; attempt < 8 && budgetLeft(); attempt++) {
            History.Request r = send(principal, key, amount, instance, random);
            switch (r.outcome()) {
                case CREATED, REPLAYED -> {
                    double p = random.nextDouble();
                    if (p < 0.15) { // the app did not notice the answer and sends again, elsewhere
                        send(principal, key, amount, other(instance, random), random);
                    } else if (p < 0.25) { // same key, edited amount: must be refused
                        send(principal, key, amount + 1, other(instance, random), random);
                    }
                    return;
                }
                case REUSED_422, REJECTED_4XX, UNEXPECTED -> {
                    return;
                }
                case IN_USE_409 -> Thread.sleep(random.nextInt(100, 400));
                case UNKNOWN -> {
                    if (random.nextDouble() < 0.1) {
                        return; // the user gave up: this intent's outcome stays unknown
                    }
                    if (random.nextDouble() < 0.15) {
                        amount = amount + 1; // the user edited the amount before retrying
                    }
                    Thread.sleep(random.nextInt(50, 300));
                }
            }
            instance = other(instance, random);
        }
    }

    /**
     * Clients that were answered 201 and lost the answer (the app was killed before it stored it) send the same
     * key and body again, retrying as {@link #intent} does after an unknown outcome until a definitive answer.
     * Bounded in attempts, not by the load's deadline: they start when the scenario says so.
     */
    ExecutorService resend(List<History.Request> acknowledged) {
        ExecutorService pool = Executors.newFixedThreadPool(3, r -> {
            Thread t = new Thread(r, "resend-client");
            t.setDaemon(true);
            return t;
        });
        for (History.Request original : acknowledged) {
            pool.submit(() -> {
                try {
                    resendUntilAnswered(original.principal(), original.key(), original.amount());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (RuntimeException | Error e) {
                    history.clientDied(original.principal(), e);
                }
            });
        }
        pool.shutdown();
        return pool;
    }

    private void resendUntilAnswered(String principal, String key, long amount) throws InterruptedException {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        int instance = random.nextInt(instances.size());
        for (int attempt = 0; attempt < 8; attempt++) {
            switch (send(principal, key, amount, instance, random).outcome()) {
                case IN_USE_409 -> Thread.sleep(random.nextInt(100, 400));
                case UNKNOWN -> Thread.sleep(random.nextInt(50, 300));
                default -> {
                    return;
                }
            }
            instance = other(instance, random);
        }
    }

    private static JsonNode parse(String body) {
        try {
            return JSON.readTree(body);
        } catch (java.io.IOException notJson) {
            return null;
        }
    }

    private int other(int instance, ThreadLocalRandom random) {
        return (instance + 1 + random.nextInt(instances.size() - 1)) % instances.size();
    }

    private History.Request send(String principal, String key, long amount, int instanceIndex, ThreadLocalRandom random) {
        sent.incrementAndGet();
        ServiceInstance instance = instances.get(instanceIndex);
        String instanceId = instance.id; // the incarnation this request went to, even if it is restarted meanwhile
        // most clients wait a while; some give up quickly, as a phone on a bad network does
        Duration timeout = random.nextDouble() < 0.7 ? Duration.ofMillis(random.nextInt(1500, 4000))
                : Duration.ofMillis(random.nextInt(20, 400));
        String body = """
                {"amount": %d, "currency": "%s", "destination": {"iban": "%s", "name": "%s"}, "description": "fault suite"}"""
                .formatted(amount, Checker.CURRENCY, Checker.IBAN, Checker.NAME);
        HttpRequest request = HttpRequest.newBuilder(URI.create(instance.url() + "/v1/transfers"))
                .timeout(timeout)
                .header("Authorization", "Bearer " + tokens.get(principal))
                .header("Content-Type", "application/json")
                .header("Idempotency-Key", key)
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        long started = System.nanoTime();
        History.Outcome outcome;
        int status = -1;
        String transferId = null;
        String note = null;
        History.Unknown why = null;
        try {
            HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
            status = response.statusCode();
            if (status == 201) {
                JsonNode json = parse(response.body());
                transferId = json == null ? null : json.path("id").asText(null);
                if (transferId == null) {
                    outcome = History.Outcome.UNEXPECTED; // a 201 the client cannot use is a lost answer, not an unknown one
                    note = "201 without a transfer id: " + response.body();
                } else {
                    boolean replayed = response.headers().firstValue("Idempotent-Replayed").isPresent();
                    outcome = replayed ? History.Outcome.REPLAYED : History.Outcome.CREATED;
                    if (json.path("amount").asLong() != amount) {
                        note = "201 body amount " + json.path("amount").asLong();
                    }
                }
            } else if (status == 422) {
                outcome = History.Outcome.REUSED_422;
            } else if (status == 409) {
                outcome = History.Outcome.IN_USE_409;
            } else if (status == 503 && response.headers().firstValue("Retry-After").isPresent()) {
                outcome = History.Outcome.UNKNOWN; // the contract's "retry with the same key"
                why = History.Unknown.RETRY_LATER_503;
            } else if (status >= 500) {
                outcome = History.Outcome.UNEXPECTED; // a 500, or a 503 without Retry-After, is no answer the contract gives
                note = response.body();
            } else {
                outcome = History.Outcome.REJECTED_4XX;
                note = response.body();
            }
        } catch (java.net.http.HttpTimeoutException e) {
            outcome = History.Outcome.UNKNOWN;
            why = History.Unknown.CLIENT_TIMEOUT;
            note = e.getClass().getSimpleName();
        } catch (java.io.IOException e) {
            // refused or reset: only excusable on an instance the scenario killed or paused (the checker decides)
            outcome = History.Outcome.UNKNOWN;
            why = History.Unknown.CONNECTION_BROKEN;
            note = e.getClass().getSimpleName();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            outcome = History.Outcome.UNKNOWN;
            why = History.Unknown.CLIENT_TIMEOUT;
        }
        History.Request r = new History.Request(principal, key, amount, instanceId, started, System.nanoTime(),
                outcome, status, transferId, note, why);
        history.add(r);
        return r;
    }
}
