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
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Java SDK's retry layer (clients/java) against the real service behind a {@link FaultyFront} that fails
 * the first attempts: one key per intent on every attempt, one transfer per intent in PostgreSQL, the waits
 * that {@code Retry-After} asked for, no retry of an answer that retrying cannot change, and a budget that
 * is never overrun.
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

    private static long gapMillis(List<Attempt> posts, int i) {
        return (posts.get(i + 1).arrivedNanos() - posts.get(i).arrivedNanos()) / 1_000_000;
    }
}
