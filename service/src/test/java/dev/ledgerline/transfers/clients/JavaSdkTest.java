package dev.ledgerline.transfers.clients;

import dev.ledgerline.client.model.Transfer;
import dev.ledgerline.client.model.TransferRequest;
import dev.ledgerline.client.model.TransferRequestDestination;
import dev.ledgerline.client.model.TransferStatus;
import dev.ledgerline.sdk.LedgerlineClient;
import dev.ledgerline.sdk.RetryBudgetExhausted;
import dev.ledgerline.sdk.RetryPolicy;
import dev.ledgerline.sdk.TransferRejected;
import dev.ledgerline.transfers.clients.FaultyFront.Attempt;
import dev.ledgerline.transfers.clients.FaultyFront.Fault;
import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Db;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Java SDK's retry layer (clients/java) against the real service behind a {@link FaultyFront} that fails
 * the first attempts: one key per intent on every attempt, one transfer per intent in PostgreSQL, the waits
 * that {@code Retry-After} asked for, no retry of an answer that retrying cannot change, a budget that
 * is never overrun, and the lookup by key that finds the transfer of a lost answer.
 */
@QuarkusTest
class JavaSdkTest {

    @TestHTTPResource("/")
    URI service;

    private FaultyFront front;
    private final List<LedgerlineClient.RetryEvent> retries = new CopyOnWriteArrayList<>();

    @BeforeEach
    void startFront() throws Exception {
        front = FaultyFront.start(service, 2, 1);
    }

    @AfterEach
    void stopFront() throws Exception {
        front.close();
    }

    private LedgerlineClient client(String subject, RetryPolicy policy) {
        String token = Api.writer(subject);
        return LedgerlineClient.create(front.uri(), () -> token, policy, retries::add);
    }

    private static TransferRequest request(long amount) {
        return new TransferRequest().amount(amount).currency(TransferRequest.CurrencyEnum.EUR)
                .destination(new TransferRequestDestination().iban(Api.IBAN).name("Ada Lovelace")).description("Java SDK");
    }

    private List<Attempt> posts() {
        return front.attempts().stream().filter(a -> a.method().equals("POST"))
                .sorted(Comparator.comparingLong(Attempt::arrivedNanos)).toList();
    }

    @Test
    void oneTransferPerIntentThroughA503A409AndADroppedConnection() {
        front.script(Fault.SERVICE_UNAVAILABLE, Fault.KEY_IN_USE, Fault.DROP_AFTER_SERVICE_ANSWERED);
        LedgerlineClient client = client("sdk-java-alice", RetryPolicy.DEFAULT);

        LedgerlineClient.Created created = client.createTransfer(request(4200));

        List<Attempt> posts = posts();
        assertEquals(List.of(Fault.SERVICE_UNAVAILABLE, Fault.KEY_IN_USE, Fault.DROP_AFTER_SERVICE_ANSWERED, Fault.PASS),
                posts.stream().map(Attempt::fault).toList());
        assertTrue(posts.stream().allMatch(a -> created.idempotencyKey().equals(a.idempotencyKey())),
                "every attempt carries the intent's one key: " + posts);
        assertEquals(4, created.attempts());
        // the dropped attempt created the transfer; the client learns of it from the replay
        assertEquals(201, posts.get(2).serviceStatus());
        assertTrue(created.replayed(), "Idempotent-Replayed surfaced");
        assertEquals(1, Db.count("SELECT count(*) FROM transfers WHERE user_id = ? AND idempotency_key = ?",
                "sdk-java-alice", created.idempotencyKey()));

        // the waits Retry-After asked for (2 s after the 503, 1 s after the 409), then the client's own backoff
        assertTrue(gapMillis(posts, 0) >= 2000, "waited " + gapMillis(posts, 0) + " ms after 503 + Retry-After: 2");
        assertTrue(gapMillis(posts, 1) >= 1000, "waited " + gapMillis(posts, 1) + " ms after 409 + Retry-After: 1");
        assertEquals(List.of(Duration.ofSeconds(2), Duration.ofSeconds(1)), retries.stream().limit(2).map(LedgerlineClient.RetryEvent::delay).toList());
        assertTrue(retries.get(0).fromRetryAfter() && retries.get(1).fromRetryAfter());
        assertFalse(retries.get(2).fromRetryAfter(), "a dropped connection has no Retry-After: backoff");
        // the third attempt's step: base delay doubled twice, full jitter below it
        assertTrue(retries.get(2).delay().compareTo(RetryPolicy.DEFAULT.baseDelay().multipliedBy(4)) <= 0, retries.get(2).toString());

        Transfer sent = client.waitForFinal(created.transfer().getId(), Duration.ofSeconds(30));
        assertEquals(TransferStatus.SENT, sent.getStatus());
        assertTrue(front.attempts().stream().anyMatch(a -> a.method().equals("GET") && "wait=25".equals(a.prefer())),
                "the poll asks the service to hold it: " + front.attempts());
    }

    @Test
    void neverRetriesAnAnswerThatRetryingCannotChange() {
        LedgerlineClient client = client("sdk-java-bob", RetryPolicy.DEFAULT);
        String key = client.createTransfer(request(100)).idempotencyKey();

        TransferRejected reused = assertThrows(TransferRejected.class, () -> client.createTransfer(request(101), key));
        assertEquals(422, reused.status());
        assertTrue(reused.problem().contains("idempotency-key-reused"), reused.problem());

        TransferRejected invalid = assertThrows(TransferRejected.class, () -> client.createTransfer(request(-5)));
        assertEquals(400, invalid.status());

        LedgerlineClient stranger = LedgerlineClient.create(front.uri(), () -> "not-a-token", RetryPolicy.DEFAULT, retries::add);
        assertEquals(401, assertThrows(TransferRejected.class, () -> stranger.createTransfer(request(102))).status());

        LedgerlineClient reader = LedgerlineClient.create(front.uri(), () -> Api.token("sdk-java-reader", List.of("transfers.read")),
                RetryPolicy.DEFAULT, retries::add);
        assertEquals(403, assertThrows(TransferRejected.class, () -> reader.createTransfer(request(103))).status());

        assertEquals(5, posts().size(), "one attempt each: " + posts());
        assertTrue(retries.isEmpty(), "no retry: " + retries);
        assertEquals(1, Db.count("SELECT count(*) FROM transfers WHERE user_id = ?", "sdk-java-bob"));
    }

    @Test
    void givesUpWithTheKeyWhenRetryAfterReachesBeyondTheBudget() {
        front.script(Fault.SERVICE_UNAVAILABLE, Fault.SERVICE_UNAVAILABLE);
        LedgerlineClient client = client("sdk-java-carol", RetryPolicy.DEFAULT.withBudget(Duration.ofSeconds(1)));

        RetryBudgetExhausted gaveUp = assertThrows(RetryBudgetExhausted.class, () -> client.createTransfer(request(300)));

        assertEquals(1, gaveUp.attempts(), "a 2 s Retry-After does not fit a 1 s budget: no second attempt");
        assertEquals(503, gaveUp.lastStatus());
        assertEquals(posts().get(0).idempotencyKey(), gaveUp.idempotencyKey());

        // continuing the intent later with the key it gave back creates it once
        front.script();
        LedgerlineClient.Created created = LedgerlineClient.create(front.uri(), () -> Api.writer("sdk-java-carol"), RetryPolicy.DEFAULT, null)
                .createTransfer(request(300), gaveUp.idempotencyKey());
        assertFalse(created.replayed());
        assertEquals(1, Db.count("SELECT count(*) FROM transfers WHERE user_id = ?", "sdk-java-carol"));
    }

    @Test
    void findsTheTransferWhoseResponseWasLostByItsKeyAndOnlyTheOwnersOne() {
        // the service creates the transfer, its answer is dropped, and the budget is too small for a retry
        front.script(Fault.DROP_AFTER_SERVICE_ANSWERED);
        String key = "sdk:java/lost-" + UUID.randomUUID();
        LedgerlineClient client = client("sdk-java-dave", RetryPolicy.DEFAULT.withBudget(Duration.ofMillis(1)));
        RetryBudgetExhausted gaveUp = assertThrows(RetryBudgetExhausted.class, () -> client.createTransfer(request(500), key));
        assertEquals(key, gaveUp.idempotencyKey());
        assertEquals(201, posts().get(0).serviceStatus(), "the dropped attempt reached the service");

        Transfer found = client.findByIdempotencyKey(key);

        assertNotNull(found, "the transfer the lost answer was about");
        List<Map<String, Object>> rows = Db.query("SELECT id::text AS id, amount FROM transfers WHERE user_id = ? AND idempotency_key = ?",
                "sdk-java-dave", key);
        assertEquals(1, rows.size(), rows.toString());
        assertEquals(rows.get(0).get("id"), found.getId().toString());
        assertEquals(500L, found.getAmount());
        assertTrue(front.attempts().stream().anyMatch(a -> a.method().equals("GET") && a.path().equals("/v1/transfers")),
                "looked up through GET /v1/transfers: " + front.attempts());

        // a key no intent of this principal used, and the same key from another principal: nothing
        assertNull(client.findByIdempotencyKey("sdk:java/never-" + UUID.randomUUID()));
        assertNull(client("sdk-java-eve", RetryPolicy.DEFAULT).findByIdempotencyKey(key), "another principal never sees it");
        // a key the Idempotency-Key header would refuse is refused, not retried
        assertEquals(400, assertThrows(TransferRejected.class, () -> client.findByIdempotencyKey("two words")).status());

        // continuing the intent under its key replays it: still one transfer
        LedgerlineClient.Created continued = client("sdk-java-dave", RetryPolicy.DEFAULT).createTransfer(request(500), key);
        assertTrue(continued.replayed());
        assertEquals(found.getId(), continued.transfer().getId());
        assertEquals(1, Db.count("SELECT count(*) FROM transfers WHERE user_id = ?", "sdk-java-dave"));
        assertTrue(retries.isEmpty(), "nothing was retried: " + retries);
    }

    @Test
    void followsTheEventFeedThroughA503AndADroppedAnswerSeeingEachTransitionOnce() {
        String ops = Api.token("sdk-java-feed", List.of("transfers.read.all"));
        LedgerlineClient follower = LedgerlineClient.create(front.uri(), () -> ops, RetryPolicy.DEFAULT, retries::add);
        String cursor = null;
        for (LedgerlineClient.EventBatch batch; !(batch = follower.nextEvents(cursor, 1000, Duration.ZERO)).events().isEmpty(); ) {
            cursor = batch.cursor();
        }
        LedgerlineClient writer = client("sdk-java-feed-writer", RetryPolicy.DEFAULT);
        List<UUID> ids = List.of(writer.createTransfer(request(601)).transfer().getId(),
                writer.createTransfer(request(602)).transfer().getId());

        // the feed's own requests meet a 503 and a dropped answer; retried with the same cursor, nothing repeats
        front.script(io.vertx.core.http.HttpMethod.GET, "/v1/events", Fault.SERVICE_UNAVAILABLE, Fault.DROP_AFTER_SERVICE_ANSWERED);
        Map<UUID, List<Long>> seen = new java.util.HashMap<>();
        long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() < until && !ids.stream().allMatch(id -> seen.getOrDefault(id, List.of()).size() == 3)) {
            LedgerlineClient.EventBatch batch = follower.nextEvents(cursor, 2, Duration.ofSeconds(1));
            cursor = batch.cursor();
            for (var e : batch.events()) {
                if (ids.contains(e.getTransferId())) {
                    seen.computeIfAbsent(e.getTransferId(), k -> new ArrayList<>()).add(e.getVersion());
                }
            }
        }
        for (UUID id : ids) {
            assertEquals(List.of(0L, 1L, 2L), seen.get(id), "pending, processing, sent of " + id + ", each once");
        }
        assertTrue(front.attempts().stream().anyMatch(a -> a.fault() == Fault.SERVICE_UNAVAILABLE && a.path().equals("/v1/events")),
                "the feed met the 503: " + front.attempts());
        // a cursor older than the feed keeps is refused, not moved forward
        String expired = java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(("1.1." + UUID.randomUUID() + ".0."
                + java.time.Instant.now().minus(Duration.ofDays(31)).toEpochMilli()).getBytes());
        assertEquals(410, assertThrows(TransferRejected.class, () -> follower.nextEvents(expired, 10, Duration.ZERO)).status());
    }

    private static long gapMillis(List<Attempt> posts, int i) {
        return (posts.get(i + 1).arrivedNanos() - posts.get(i).arrivedNanos()) / 1_000_000;
    }
}
