package dev.ledgerline.transfers.contract;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledgerline.transfers.account.CreditRequest;
import dev.ledgerline.transfers.api.AccountViews;
import dev.ledgerline.transfers.api.EventPage;
import dev.ledgerline.transfers.api.TransferEventsView;
import dev.ledgerline.transfers.api.TransferPage;
import dev.ledgerline.transfers.api.TransferResource;
import dev.ledgerline.transfers.api.TransferView;
import dev.ledgerline.transfers.api.WebhookViews;
import dev.ledgerline.transfers.idempotency.InFlightMarker;
import dev.ledgerline.devstack.LocalPostgres;
import dev.ledgerline.transfers.problem.Problem;
import dev.ledgerline.transfers.problem.ProblemType;
import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Contract;
import dev.ledgerline.transfers.support.ContractValidation;
import dev.ledgerline.transfers.support.TestStack;
import dev.ledgerline.transfers.transfer.TransferRequest;
import dev.ledgerline.transfers.transfer.TransferStatus;
import io.quarkus.redis.datasource.RedisDataSource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import java.util.stream.Stream;

import static dev.ledgerline.transfers.support.Api.as;
import static dev.ledgerline.transfers.support.Api.body;
import static dev.ledgerline.transfers.support.Api.newKey;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Fails when the implementation and {@code openapi.yaml} disagree (the document is {@link Contract#defaultLocation()},
 * {@code -Dcontract.location=...} to compare another; a missing or empty one fails every check here):
 * <ol>
 *   <li>paths, methods, parameters, request bodies, media types and groups of the JAX-RS resources, both ways;</li>
 *   <li>the JSON fields of the response records and of the request against the schemas, the transfer
 *       statuses and the problem types against the document's lists, both ways;</li>
 *   <li>every status code the document promises for an operation is provoked for real, each answer validated
 *       by {@link ContractValidation} — so an undocumented answer fails, and so does a documented one the
 *       service never gives.</li>
 * </ol>
 */
@QuarkusTest
class ContractDriftTest {

    /**
     * Statuses the battery does not provoke. 500 is the answer to a bug (an unexpected exception, mapped to
     * {@code internal-error}): there is no request that makes a correct service send it, and planting a bug
     * in the service to prove it would test the plant, not the service. Its shape is the same
     * {@code Problem} schema that every other error answer is validated against. 429 is provoked for
     * every operation, and validated against the contract, by {@code RateLimitTest}, which runs with small
     * budgets in its own profile; the default test profile's budgets are too large to exhaust here.
     */
    static final Set<String> EXEMPT_STATUSES = Set.of("500", "429");

    private static final Set<String> DEV_AND_TEST_TOOLS = Set.of("/dev", "/sandbox");

    @Inject
    ObjectMapper mapper;

    @Inject
    RedisDataSource redis;

    private static Contract contract() {
        return Contract.load(Contract.defaultLocation());
    }

    @Test
    void theResourcesImplementExactlyTheDocumentedOperations() {
        List<ContractDrift.Endpoint> implemented = ContractDrift.implemented(TransferResource.class, "dev.ledgerline.transfers",
                DEV_AND_TEST_TOOLS);
        assertTrue(implemented.size() >= 3, "the reflection found the /v1 resources: " + implemented);
        assertEquals(List.of(), ContractDrift.operations(contract(), implemented));
    }

    @Test
    void theResponseAndRequestFieldsAreTheDocumentedOnes() {
        Contract contract = contract();
        Set<String> visited = new TreeSet<>();
        List<String> drift = new ArrayList<>();
        drift.addAll(ContractDrift.schema(contract, mapper, TransferView.class, "Transfer", ContractDrift.Direction.RESPONSE, visited));
        drift.addAll(ContractDrift.schema(contract, mapper, TransferEventsView.class, "TransferEvents", ContractDrift.Direction.RESPONSE, visited));
        drift.addAll(ContractDrift.schema(contract, mapper, TransferPage.class, "TransferPage", ContractDrift.Direction.RESPONSE, visited));
        drift.addAll(ContractDrift.schema(contract, mapper, EventPage.class, "EventPage", ContractDrift.Direction.RESPONSE, visited));
        drift.addAll(ContractDrift.schema(contract, mapper, Problem.class, "Problem", ContractDrift.Direction.RESPONSE, visited));
        drift.addAll(ContractDrift.schema(contract, mapper, TransferRequest.class, "TransferRequest", ContractDrift.Direction.REQUEST, visited));
        drift.addAll(ContractDrift.schema(contract, mapper, WebhookViews.Created.class, "WebhookEndpointCreated", ContractDrift.Direction.RESPONSE, visited));
        drift.addAll(ContractDrift.schema(contract, mapper, WebhookViews.EndpointList.class, "WebhookEndpointList", ContractDrift.Direction.RESPONSE, visited));
        drift.addAll(ContractDrift.schema(contract, mapper, WebhookViews.SecretRotated.class, "WebhookSecretRotated", ContractDrift.Direction.RESPONSE, visited));
        drift.addAll(ContractDrift.schema(contract, mapper, WebhookViews.DeliveryList.class, "WebhookDeliveryList", ContractDrift.Direction.RESPONSE, visited));
        drift.addAll(ContractDrift.schema(contract, mapper, AccountViews.Balances.class, "Balances", ContractDrift.Direction.RESPONSE, visited));
        drift.addAll(ContractDrift.schema(contract, mapper, AccountViews.BalanceView.class, "Balance", ContractDrift.Direction.RESPONSE, visited));
        drift.addAll(ContractDrift.schema(contract, mapper, AccountViews.EntryPage.class, "LedgerEntryPage", ContractDrift.Direction.RESPONSE, visited));
        drift.addAll(ContractDrift.schema(contract, mapper, AccountViews.EntryView.class, "LedgerEntry", ContractDrift.Direction.RESPONSE, visited));
        drift.addAll(ContractDrift.schema(contract, mapper, AccountViews.CreditView.class, "Credit", ContractDrift.Direction.RESPONSE, visited));
        drift.addAll(ContractDrift.schema(contract, mapper, CreditRequest.class, "CreditRequest", ContractDrift.Direction.REQUEST, visited));

        List<String> statuses = Arrays.stream(TransferStatus.values()).map(TransferStatus::db).toList();
        drift.addAll(ContractDrift.enumeration(contract, "TransferStatus", statuses));
        drift.addAll(ContractDrift.enumeration(contract, "TransferEvent.fromStatus",
                Stream.concat(statuses.stream(), Stream.of("null")).toList()));
        drift.addAll(ContractDrift.enumeration(contract, "FeedEvent.fromStatus",
                Stream.concat(statuses.stream(), Stream.of("null")).toList()));
        visited.add("TransferStatus");

        drift.addAll(ContractDrift.problemTypes(contract, ProblemType.BASE, Arrays.stream(ProblemType.values())
                .map(t -> new ContractDrift.ProblemKind(t.uri().substring(ProblemType.BASE.length()), t.status(), t.title()))
                .toList()));

        Set<String> unchecked = new TreeSet<>();
        contract.root().path("components").path("schemas").fieldNames().forEachRemaining(unchecked::add);
        unchecked.removeAll(visited);
        if (!unchecked.isEmpty()) {
            drift.add("schemas no implementation type is compared with (add them to this test): " + unchecked);
        }
        assertEquals(List.of(), drift);
    }

    @Test
    void everyDocumentedAnswerIsGivenAndMatchesTheContract() throws Exception {
        assertTrue(ContractValidation.installed(), "the contract validation filter is active for @QuarkusTest classes");
        ContractValidation.forgetObservations();

        String writer = Api.writer("drift");
        String readOnly = Api.token("drift-reader", List.of("transfers.read"));
        String writeOnly = Api.token("drift-writer-only", List.of("transfers.write"));

        // createTransfer
        String key = newKey();
        String id = Api.post(writer, key, body(4200)).then().statusCode(201).extract().path("id");
        Api.post(writer, key, body(4200)).then().statusCode(201).header("Idempotent-Replayed", "true");
        Api.post(writer, key, body(4201)).then().statusCode(422);
        as(writer).contentType(ContentType.JSON).body(body(10)).post("/v1/transfers").then().statusCode(400)
                .body("type", equalTo(ProblemType.IDEMPOTENCY_KEY_MISSING.uri()));
        Api.post(writer, "two words", body(10)).then().statusCode(400)
                .body("type", equalTo(ProblemType.IDEMPOTENCY_KEY_INVALID.uri()));
        Api.post(writer, newKey(), "{\"amount\": 0}").then().statusCode(400)
                .body("type", equalTo(ProblemType.VALIDATION_FAILED.uri()));
        Api.post(writer, newKey(), "{\"amount\": ").then().statusCode(400)
                .body("type", equalTo(ProblemType.MALFORMED_REQUEST.uri()));
        given().contentType(ContentType.JSON).header("Idempotency-Key", newKey()).body(body(10)).post("/v1/transfers")
                .then().statusCode(401);
        Api.post(readOnly, newKey(), body(10)).then().statusCode(403);
        as(writer).accept("text/plain").contentType(ContentType.JSON).header("Idempotency-Key", newKey()).body(body(10))
                .post("/v1/transfers").then().statusCode(406);
        Api.post(writer, newKey(), body(10, "EUR", "x".repeat(17_000))).then().statusCode(413);
        as(writer).contentType("text/plain").header("Idempotency-Key", newKey()).body("amount=10").post("/v1/transfers")
                .then().statusCode(415);
        inFlight("drift", planted -> Api.post(writer, planted, body(10)).then().statusCode(409));

        // getTransfer
        String etag = Api.get(writer, id).then().statusCode(200).extract().header("ETag");
        as(writer).header("If-None-Match", etag).get("/v1/transfers/" + id).then().statusCode(304);
        given().get("/v1/transfers/" + id).then().statusCode(401);
        Api.get(writeOnly, id).then().statusCode(403);
        Api.get(writer, UUID.randomUUID().toString()).then().statusCode(404);
        as(writer).accept("text/plain").get("/v1/transfers/" + id).then().statusCode(406);

        // getTransferEvents
        as(writer).get("/v1/transfers/" + id + "/events").then().statusCode(200);
        given().get("/v1/transfers/" + id + "/events").then().statusCode(401);
        as(writeOnly).get("/v1/transfers/" + id + "/events").then().statusCode(403);
        as(writer).get("/v1/transfers/" + UUID.randomUUID() + "/events").then().statusCode(404);
        as(writer).accept("text/plain").get("/v1/transfers/" + id + "/events").then().statusCode(406);

        // cancelTransfer
        String scheduledBody = "{\"amount\": 10, \"currency\": \"EUR\", \"destination\": {\"iban\": \"" + Api.IBAN
                + "\", \"name\": \"Ada Lovelace\"}, \"executeAt\": \"" + Instant.now().plus(Duration.ofHours(1)) + "\"}";
        String scheduled = Api.post(writer, newKey(), scheduledBody).then().statusCode(201).extract().path("id");
        as(writer).post("/v1/transfers/" + scheduled + "/cancel").then().statusCode(200);
        given().post("/v1/transfers/" + scheduled + "/cancel").then().statusCode(401);
        as(readOnly).post("/v1/transfers/" + scheduled + "/cancel").then().statusCode(403);
        as(writer).post("/v1/transfers/" + UUID.randomUUID() + "/cancel").then().statusCode(404);
        as(writer).accept("text/plain").post("/v1/transfers/" + scheduled + "/cancel").then().statusCode(406);
        Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> "sent".equals(Api.get(writer, id).path("status")));
        as(writer).post("/v1/transfers/" + id + "/cancel").then().statusCode(409)
                .body("type", equalTo(ProblemType.TRANSFER_NOT_CANCELLABLE.uri()));

        // getTransfer as a long poll that ends on its deadline, then on a change
        as(writer).header("Prefer", "wait=1").header("If-None-Match", "\"999\"").get("/v1/transfers/" + id).then()
                .statusCode(200).header("Preference-Applied", "wait=1");

        // listTransfers
        String ops = Api.token("drift-ops", List.of("transfers.read.all"));
        as(ops).queryParam("status", "pending").queryParam("limit", 5).get("/v1/transfers").then().statusCode(200);
        as(ops).queryParam("limit", 0).get("/v1/transfers").then().statusCode(400);
        given().get("/v1/transfers").then().statusCode(401);
        as(readOnly).get("/v1/transfers").then().statusCode(403);
        as(ops).accept("text/plain").get("/v1/transfers").then().statusCode(406);
        // listTransfers, finding the caller's transfer by key
        as(writer).queryParam("idempotencyKey", key).get("/v1/transfers").then().statusCode(200).body("items[0].id", equalTo(id));
        as(writer).queryParam("idempotencyKey", "two words").get("/v1/transfers").then().statusCode(400);
        as(writeOnly).queryParam("idempotencyKey", key).get("/v1/transfers").then().statusCode(403);

        // listMyTransfers (newest first: the scheduled transfer cancelled above)
        as(writer).queryParam("limit", 1).get("/v1/me/transfers").then().statusCode(200).body("items[0].id", equalTo(scheduled));
        as(writer).queryParam("limit", 0).get("/v1/me/transfers").then().statusCode(400);
        given().get("/v1/me/transfers").then().statusCode(401);
        as(writeOnly).get("/v1/me/transfers").then().statusCode(403);
        as(writer).accept("text/plain").get("/v1/me/transfers").then().statusCode(406);

        // listEvents
        as(ops).queryParam("limit", 5).get("/v1/events").then().statusCode(200);
        as(ops).queryParam("limit", 0).get("/v1/events").then().statusCode(400);
        String expired = "1.1." + UUID.randomUUID() + ".0." + java.time.Instant.now().minus(java.time.Duration.ofDays(400)).toEpochMilli();
        as(ops).queryParam("after", java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(expired.getBytes()))
                .get("/v1/events").then().statusCode(410);
        given().get("/v1/events").then().statusCode(401);
        as(readOnly).get("/v1/events").then().statusCode(403);
        as(ops).accept("text/plain").get("/v1/events").then().statusCode(406);

        // the webhook endpoints
        String hooks = Api.token("drift-hooks", List.of("webhooks.admin"));
        String hook = as(hooks).contentType(ContentType.JSON).body(java.util.Map.of("url", "http://127.0.0.1:9/drift", "description", "drift"))
                .post("/v1/webhook-endpoints").then().statusCode(201).extract().path("id");
        as(hooks).contentType(ContentType.JSON).body("{\"url\": \"ftp://example.com/x\"}").post("/v1/webhook-endpoints").then().statusCode(400);
        given().contentType(ContentType.JSON).body("{\"url\": \"https://example.com/x\"}").post("/v1/webhook-endpoints").then().statusCode(401);
        as(ops).contentType(ContentType.JSON).body("{\"url\": \"https://example.com/x\"}").post("/v1/webhook-endpoints").then().statusCode(403);
        as(hooks).get("/v1/webhook-endpoints").then().statusCode(200);
        given().get("/v1/webhook-endpoints").then().statusCode(401);
        as(ops).get("/v1/webhook-endpoints").then().statusCode(403);
        as(hooks).get("/v1/webhook-endpoints/" + hook + "/deliveries").then().statusCode(200);
        as(hooks).get("/v1/webhook-endpoints/" + UUID.randomUUID() + "/deliveries").then().statusCode(404);
        given().get("/v1/webhook-endpoints/" + hook + "/deliveries").then().statusCode(401);
        as(ops).get("/v1/webhook-endpoints/" + hook + "/deliveries").then().statusCode(403);
        as(hooks).post("/v1/webhook-endpoints/" + hook + "/secret").then().statusCode(200);
        as(hooks).post("/v1/webhook-endpoints/" + UUID.randomUUID() + "/secret").then().statusCode(404);
        given().post("/v1/webhook-endpoints/" + hook + "/secret").then().statusCode(401);
        as(ops).post("/v1/webhook-endpoints/" + hook + "/secret").then().statusCode(403);
        given().delete("/v1/webhook-endpoints/" + hook).then().statusCode(401);
        as(ops).delete("/v1/webhook-endpoints/" + hook).then().statusCode(403);
        as(hooks).delete("/v1/webhook-endpoints/" + hook).then().statusCode(204);
        as(hooks).delete("/v1/webhook-endpoints/" + hook).then().statusCode(404);

        // the accounts: balances, entries, credits, and a transfer the balance does not cover
        String booking = Api.token("drift-booking", List.of("accounts.credit"));
        as(writer).get("/v1/accounts/me").then().statusCode(200);
        given().get("/v1/accounts/me").then().statusCode(401);
        as(writeOnly).get("/v1/accounts/me").then().statusCode(403);
        as(writer).accept("text/plain").get("/v1/accounts/me").then().statusCode(406);
        as(writer).queryParam("limit", 2).get("/v1/accounts/me/entries").then().statusCode(200);
        as(writer).queryParam("limit", 0).get("/v1/accounts/me/entries").then().statusCode(400);
        given().get("/v1/accounts/me/entries").then().statusCode(401);
        as(writeOnly).get("/v1/accounts/me/entries").then().statusCode(403);
        as(writer).accept("text/plain").get("/v1/accounts/me/entries").then().statusCode(406);
        String creditKey = newKey();
        String credit = "{\"amount\": 100, \"currency\": \"EUR\", \"reference\": \"drift-1\"}";
        as(booking).contentType(ContentType.JSON).header("Idempotency-Key", creditKey).body(credit)
                .post("/v1/accounts/drift/credits").then().statusCode(201);
        as(booking).contentType(ContentType.JSON).header("Idempotency-Key", creditKey).body(credit)
                .post("/v1/accounts/drift/credits").then().statusCode(201).header("Idempotent-Replayed", "true");
        as(booking).contentType(ContentType.JSON).header("Idempotency-Key", creditKey).body(credit.replace("100", "101"))
                .post("/v1/accounts/drift/credits").then().statusCode(422);
        as(booking).contentType(ContentType.JSON).body(credit).post("/v1/accounts/drift/credits").then().statusCode(400);
        given().contentType(ContentType.JSON).header("Idempotency-Key", newKey()).body(credit)
                .post("/v1/accounts/drift/credits").then().statusCode(401);
        as(writer).contentType(ContentType.JSON).header("Idempotency-Key", newKey()).body(credit)
                .post("/v1/accounts/drift/credits").then().statusCode(403);
        as(booking).accept("text/plain").contentType(ContentType.JSON).header("Idempotency-Key", newKey()).body(credit)
                .post("/v1/accounts/drift/credits").then().statusCode(406);
        as(booking).contentType("text/plain").header("Idempotency-Key", newKey()).body("amount=1")
                .post("/v1/accounts/drift/credits").then().statusCode(415);
        Api.post(Api.writer("drift-poor-" + UUID.randomUUID()), newKey(), body(100_000_000)).then().statusCode(422)
                .body("type", equalTo(ProblemType.INSUFFICIENT_FUNDS.uri()));

        // every operation without its database
        LocalPostgres pg = TestStack.current().postgres();
        pg.stop();
        try {
            as(writer).get("/v1/accounts/me").then().statusCode(503);
            as(writer).get("/v1/accounts/me/entries").then().statusCode(503);
            as(booking).contentType(ContentType.JSON).header("Idempotency-Key", newKey()).body(credit)
                    .post("/v1/accounts/drift/credits").then().statusCode(503);
            as(hooks).contentType(ContentType.JSON).body("{\"url\": \"http://127.0.0.1:9/drift\"}").post("/v1/webhook-endpoints").then().statusCode(503);
            as(hooks).get("/v1/webhook-endpoints").then().statusCode(503);
            as(hooks).get("/v1/webhook-endpoints/" + hook + "/deliveries").then().statusCode(503);
            as(hooks).delete("/v1/webhook-endpoints/" + hook).then().statusCode(503);
            as(hooks).post("/v1/webhook-endpoints/" + hook + "/secret").then().statusCode(503);
            Api.post(writer, newKey(), body(10)).then().statusCode(503);
            Api.get(writer, id).then().statusCode(503);
            as(writer).get("/v1/transfers/" + id + "/events").then().statusCode(503);
            as(ops).get("/v1/transfers").then().statusCode(503);
            as(writer).get("/v1/me/transfers").then().statusCode(503);
            as(ops).get("/v1/events").then().statusCode(503);
            as(writer).post("/v1/transfers/" + id + "/cancel").then().statusCode(503);
        } finally {
            pg.startAgain();
        }

        Set<String> documented = ContractDrift.documentedAnswers(contract(), EXEMPT_STATUSES);
        Set<String> neverGiven = new TreeSet<>(documented);
        neverGiven.removeAll(ContractValidation.observations());
        assertEquals(Set.of(), neverGiven, "documented answers the service was not seen to give (observed: "
                + new TreeSet<>(ContractValidation.observations()) + ")");
    }

    /** Runs {@code request} with a fresh key that a first request of {@code principal} seems to be still working on. */
    private void inFlight(String principal, java.util.function.Consumer<String> request) {
        String key = newKey();
        String redisKey = InFlightMarker.redisKey(principal, key);
        redis.execute("SET", redisKey, InFlightMarker.value(), "PX", "30000");
        try {
            request.accept(key);
        } finally {
            redis.execute("DEL", redisKey);
        }
    }
}
