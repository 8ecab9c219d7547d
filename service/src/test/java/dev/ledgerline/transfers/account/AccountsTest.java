package dev.ledgerline.transfers.account;

import dev.ledgerline.transfers.problem.ProblemType;
import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Await;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.Sandbox;
import dev.ledgerline.transfers.support.TestStack;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static dev.ledgerline.transfers.support.Api.as;
import static dev.ledgerline.transfers.support.Api.newKey;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The ledger through HTTP: a transfer holds its amount from its owner's account at accept, in the same statement as
 * its row, and the fence that ends it posts or releases the hold. Each test uses a principal of its own, which opens
 * with the test profile's balance, {@value #OPENING} minor units, on first use.
 */
@QuarkusTest
class AccountsTest {

    static final long OPENING = 1_000_000;
    private static final Duration FINAL = Duration.ofSeconds(30);

    @AfterEach
    void healthyProvider() {
        Sandbox.reset();
        TestStack.closeBreakers();
    }

    private static String principal() {
        return "ledger-" + UUID.randomUUID();
    }

    private static String credit() {
        return Api.token("ledger-booking", List.of("accounts.credit"));
    }

    /** The caller's EUR balance as {@code [posted, held, available]}. */
    private static long[] eur(String token) {
        return Api.balance(token, "EUR");
    }

    private static void assertBalance(String token, long posted, long held) {
        long[] b = eur(token);
        assertEquals(List.of(posted, held, posted - held), b == null ? null : List.of(b[0], b[1], b[2]),
                "EUR posted, held, available");
    }

    /** The kinds of the caller's entries, newest first. */
    private static List<String> kinds(String token) {
        return as(token).get("/v1/accounts/me/entries").then().statusCode(200).extract().jsonPath().getList("items.kind");
    }

    private static Response post(String token, String key, long amount) {
        return Api.post(token, key, Api.body(amount));
    }

    @Test
    void moreThanTheAvailableBalanceIsInsufficientFundsAndWritesNothing() {
        String p = principal();
        String token = Api.writer(p);
        String key = newKey();
        post(token, key, OPENING + 1).then().statusCode(422)
                .body("type", equalTo(ProblemType.INSUFFICIENT_FUNDS.uri()));
        assertEquals(0, Db.count("SELECT count(*) FROM transfers WHERE user_id = ?", p), "no transfer row");
        assertEquals(0, Db.count("SELECT count(*) FROM ledger_entries WHERE principal = ?", p), "no entry, no hold");
        as(token).get("/v1/accounts/me").then().statusCode(200).body("balances.size()", equalTo(0));

        // nothing was written, so the key is free: the same key then creates the transfer the funds cover
        post(token, key, 1_000).then().statusCode(201);
        assertEquals(1, Db.count("SELECT count(*) FROM transfers WHERE user_id = ?", p));
    }

    @Test
    void aTransferOfExactlyTheBalanceIsAcceptedAndPostsTheAccountToZero() {
        String p = principal();
        String token = Api.writer(p);
        String key = newKey();
        String id = post(token, key, OPENING).then().statusCode(201).extract().path("id");
        long[] accepted = eur(token);
        assertEquals(OPENING, accepted[0] + (accepted[1] == 0 ? OPENING : 0), "posted is the opening until the post");
        assertEquals(0, accepted[2], "nothing available while it is held or once it is posted");

        // a replay holds nothing again
        post(token, key, OPENING).then().statusCode(201).header("Idempotent-Replayed", "true");
        post(token, newKey(), 1).then().statusCode(422).body("type", equalTo(ProblemType.INSUFFICIENT_FUNDS.uri()));

        Await.status(id, "sent", FINAL);
        assertBalance(token, 0, 0);
        assertEquals(List.of("post", "hold", "opening"), kinds(token));
        List<String> transfers = as(token).get("/v1/accounts/me/entries").then().extract().jsonPath().getList("items.transferId");
        assertEquals(id, transfers.get(0));
        assertEquals(id, transfers.get(1));
    }

    @Test
    void aCreditIsBookedOnceReplayedAndRefusedUnderItsKeyWithAnotherBody() {
        String p = principal();
        String token = Api.writer(p);
        String key = newKey();
        String body = "{\"amount\": 50000, \"currency\": \"EUR\", \"reference\": \"sepa-in-0001\"}";
        Response first = as(credit()).contentType(ContentType.JSON).header("Idempotency-Key", key).body(body)
                .post("/v1/accounts/" + p + "/credits");
        first.then().statusCode(201).body("principal", equalTo(p)).body("amount", equalTo(50000))
                .body("reference", equalTo("sepa-in-0001"));
        String creditId = first.path("id");
        assertBalance(token, OPENING + 50_000, 0);

        as(credit()).contentType(ContentType.JSON).header("Idempotency-Key", key).body(body)
                .post("/v1/accounts/" + p + "/credits")
                .then().statusCode(201).header("Idempotent-Replayed", "true").body("id", equalTo(creditId));
        as(credit()).contentType(ContentType.JSON).header("Idempotency-Key", key)
                .body("{\"amount\": 50001, \"currency\": \"EUR\", \"reference\": \"sepa-in-0001\"}")
                .post("/v1/accounts/" + p + "/credits")
                .then().statusCode(422).body("type", equalTo(ProblemType.IDEMPOTENCY_KEY_REUSED.uri()));
        assertBalance(token, OPENING + 50_000, 0);
        assertEquals(List.of("credit", "opening"), kinds(token));
        assertEquals(creditId, as(token).get("/v1/accounts/me/entries").then().extract().path("items[0].creditId"));

        // the credited money is spendable: the whole balance goes out in one transfer
        String id = post(token, newKey(), OPENING + 50_000).then().statusCode(201).extract().path("id");
        Await.status(id, "sent", FINAL);
        assertBalance(token, 0, 0);

        // only a booking service credits, and only with a key and a valid body
        as(token).contentType(ContentType.JSON).header("Idempotency-Key", newKey()).body(body)
                .post("/v1/accounts/" + p + "/credits").then().statusCode(403);
        as(credit()).contentType(ContentType.JSON).body(body).post("/v1/accounts/" + p + "/credits")
                .then().statusCode(400).body("type", equalTo(ProblemType.IDEMPOTENCY_KEY_MISSING.uri()));
        as(credit()).contentType(ContentType.JSON).header("Idempotency-Key", newKey())
                .body("{\"amount\": 0, \"currency\": \"EUR\"}").post("/v1/accounts/" + p + "/credits")
                .then().statusCode(400).body("errors.field", equalTo(List.of("amount", "reference")));
    }

    @Test
    void aTransferTheProviderRejectsReleasesItsHold() {
        Sandbox.faults(Map.of("idempotent", false, "refuseWith", 400));
        String p = principal();
        String token = Api.writer(p);
        String id = post(token, newKey(), 300_000).then().statusCode(201).extract().path("id");
        Await.status(id, "failed", FINAL);
        assertBalance(token, OPENING, 0);
        assertEquals(List.of("release", "hold", "opening"), kinds(token));
    }

    @Test
    void aCancelledTransferReleasesItsHoldAndAScheduledOneHoldsUntilThen() {
        String p = principal();
        String token = Api.writer(p);
        String body = "{\"amount\": 250000, \"currency\": \"EUR\", \"destination\": {\"iban\": \"" + Api.IBAN
                + "\", \"name\": \"Ada Lovelace\"}, \"executeAt\": \"" + Instant.now().plus(Duration.ofHours(1)) + "\"}";
        String id = Api.post(token, newKey(), body).then().statusCode(201).extract().path("id");
        assertBalance(token, OPENING, 250_000);
        as(token).post("/v1/transfers/" + id + "/cancel").then().statusCode(200).body("status", equalTo("cancelled"));
        assertBalance(token, OPENING, 0);
        // a second cancel answers the cancelled transfer again and releases nothing more
        as(token).post("/v1/transfers/" + id + "/cancel").then().statusCode(200);
        assertBalance(token, OPENING, 0);
        assertEquals(List.of("release", "hold", "opening"), kinds(token));
    }

    @Test
    void entriesArePagedNewestFirstWithoutRepeatsOrGaps() {
        String p = principal();
        String token = Api.writer(p);
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            ids.add(post(token, newKey(), 1_000 + i).then().statusCode(201).extract().path("id"));
        }
        Await.allTerminal(ids, FINAL);
        // opening + 3 holds + 3 posts
        List<String> seen = new ArrayList<>();
        String after = null;
        do {
            var spec = as(token).queryParam("limit", 2);
            if (after != null) {
                spec = spec.queryParam("after", after);
            }
            JsonPath page = spec.get("/v1/accounts/me/entries").then().statusCode(200).extract().jsonPath();
            seen.addAll(page.getList("items.id"));
            after = page.getString("nextCursor");
        } while (after != null);
        assertEquals(7, seen.size(), seen.toString());
        List<Long> numeric = seen.stream().map(Long::parseLong).toList();
        List<Long> sorted = new ArrayList<>(numeric);
        sorted.sort((a, b) -> Long.compare(b, a));
        assertEquals(sorted, numeric, "newest first");
        assertEquals(7, numeric.stream().distinct().count(), "no repeats");
        as(token).queryParam("after", "x").get("/v1/accounts/me/entries").then().statusCode(400);
        as(token).queryParam("limit", 0).get("/v1/accounts/me/entries").then().statusCode(400);
        // another principal sees none of them
        as(Api.writer(principal())).get("/v1/accounts/me/entries").then().statusCode(200).body("items.size()", equalTo(0));
    }

    /**
     * The funds check is PostgreSQL's: 50 POSTs of a tenth of the balance at once, each under its own key, from one
     * principal whose account opens with the first of them. Exactly ten fit.
     */
    @Test
    void fiftyConcurrentTransfersOfATenthOfTheBalanceAcceptExactlyTen() throws Exception {
        String p = principal();
        String token = Api.writer(p);
        ExecutorService clients = Executors.newFixedThreadPool(50);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<Response>> answers = new ArrayList<>();
        try {
            for (int i = 0; i < 50; i++) {
                Callable<Response> call = () -> {
                    start.await();
                    return post(token, newKey(), 100_000);
                };
                answers.add(clients.submit(call));
            }
            start.countDown();
            List<String> accepted = new ArrayList<>();
            int insufficient = 0;
            for (Future<Response> f : answers) {
                Response r = f.get(60, TimeUnit.SECONDS);
                if (r.statusCode() == 201) {
                    accepted.add(r.path("id"));
                } else {
                    assertEquals(422, r.statusCode(), r.asString());
                    assertEquals(ProblemType.INSUFFICIENT_FUNDS.uri(), r.path("type"));
                    insufficient++;
                }
            }
            assertEquals(10, accepted.size(), "accepted");
            assertEquals(40, insufficient, "insufficient-funds");
            assertEquals(10, Db.count("SELECT count(*) FROM transfers WHERE user_id = ?", p));
            Await.allTerminal(accepted, FINAL);
            assertEquals(10, Db.count("SELECT count(*) FROM transfers WHERE user_id = ? AND status = 'sent'", p));
            assertBalance(token, 0, 0);
            assertEquals(10, Db.count("SELECT count(*) FROM ledger_entries WHERE principal = ? AND kind = 'post'", p));
        } finally {
            clients.shutdownNow();
        }
    }

    @Test
    void aBalanceIsReadWithTheReadScopeOnly() {
        given().get("/v1/accounts/me").then().statusCode(401);
        as(Api.token(principal(), List.of("transfers.write"))).get("/v1/accounts/me").then().statusCode(403);
        assertTrue(as(Api.token(principal(), List.of("transfers.read"))).get("/v1/accounts/me").then().statusCode(200)
                .extract().jsonPath().getList("balances").isEmpty());
    }
}
