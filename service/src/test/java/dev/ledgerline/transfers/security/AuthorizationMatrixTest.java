package dev.ledgerline.transfers.security;

import dev.ledgerline.transfers.support.Api;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.BiFunction;
import java.util.stream.Stream;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Every endpoint of the test build × every kind of caller, with the status each must get (OWASP API1
 * broken object level authorization, API2 broken authentication, API5 broken function level
 * authorization). Object reads of another principal are 404, never 403, so ids cannot be probed.
 * {@code /dev/tokens} and {@code /sandbox/provider/*} exist only in dev and test builds and are open there
 * by design (the sandbox stands in for an external provider); PackagedJarIT proves the prod jar has neither.
 */
@QuarkusTest
class AuthorizationMatrixTest {

    /** Who calls. */
    enum Caller {
        NO_TOKEN(null, List.of()),
        WRONG_GROUP(null, List.of()),
        OTHER_PRINCIPAL("matrix-mallory", List.of("transfers.write", "transfers.read")),
        OWNER("matrix-alice", List.of("transfers.write", "transfers.read")),
        READ_ALL("matrix-ops", List.of("transfers.read.all")),
        WEBHOOKS_ADMIN("matrix-hooks", List.of("webhooks.admin")),
        BOOKING("matrix-booking", List.of("accounts.credit"));

        final String subject;
        final List<String> groups;

        Caller(String subject, List<String> groups) {
            this.subject = subject;
            this.groups = groups;
        }
    }

    /** One operation: how to call it, and which token counts as "the wrong group" for it. */
    record Operation(String name, List<String> wrongGroups, BiFunction<RequestSpecification, String, Response> call) {
        @Override
        public String toString() {
            return name;
        }
    }

    private static final List<String> READ_ONLY = List.of("transfers.read");
    private static final List<String> WRITE_ONLY = List.of("transfers.write");

    static final Operation CREATE = new Operation("POST /v1/transfers", READ_ONLY, (spec, id) -> spec
            .contentType(ContentType.JSON).header("Idempotency-Key", Api.newKey()).body(Api.body(42)).post("/v1/transfers"));
    static final Operation READ = new Operation("GET /v1/transfers/{id}", WRITE_ONLY,
            (spec, id) -> spec.get("/v1/transfers/" + id));
    static final Operation EVENTS = new Operation("GET /v1/transfers/{id}/events", WRITE_ONLY,
            (spec, id) -> spec.get("/v1/transfers/" + id + "/events"));
    static final Operation CANCEL = new Operation("POST /v1/transfers/{id}/cancel", READ_ONLY,
            (spec, id) -> spec.post("/v1/transfers/" + id + "/cancel"));
    static final Operation LIST = new Operation("GET /v1/transfers", READ_ONLY,
            (spec, id) -> spec.get("/v1/transfers?status=pending&limit=1"));
    static final Operation FIND_BY_KEY = new Operation("GET /v1/transfers?idempotencyKey=", WRITE_ONLY,
            (spec, id) -> spec.queryParam("idempotencyKey", "matrix:alice/1").get("/v1/transfers"));
    static final Operation OWN_LIST = new Operation("GET /v1/me/transfers", WRITE_ONLY,
            (spec, id) -> spec.get("/v1/me/transfers?limit=200"));
    static final Operation FEED = new Operation("GET /v1/events", READ_ONLY,
            (spec, id) -> spec.get("/v1/events?limit=1"));
    private static final List<String> READ_ALL_ONLY = List.of("transfers.read.all");
    static final Operation HOOKS_CREATE = new Operation("POST /v1/webhook-endpoints", READ_ALL_ONLY, (spec, id) -> spec
            .contentType(ContentType.JSON).body(Map.of("url", "http://127.0.0.1:9/matrix")).post("/v1/webhook-endpoints"));
    static final Operation HOOKS_LIST = new Operation("GET /v1/webhook-endpoints", READ_ALL_ONLY,
            (spec, id) -> spec.get("/v1/webhook-endpoints"));
    static final Operation HOOKS_DELETE = new Operation("DELETE /v1/webhook-endpoints/{id}", READ_ALL_ONLY,
            (spec, id) -> spec.delete("/v1/webhook-endpoints/" + UUID.randomUUID()));
    static final Operation HOOKS_ROTATE = new Operation("POST /v1/webhook-endpoints/{id}/secret", READ_ALL_ONLY,
            (spec, id) -> spec.post("/v1/webhook-endpoints/" + UUID.randomUUID() + "/secret"));
    static final Operation HOOKS_DELIVERIES = new Operation("GET /v1/webhook-endpoints/{id}/deliveries", READ_ALL_ONLY,
            (spec, id) -> spec.get("/v1/webhook-endpoints/" + UUID.randomUUID() + "/deliveries"));
    static final Operation BALANCES = new Operation("GET /v1/accounts/me", WRITE_ONLY,
            (spec, id) -> spec.get("/v1/accounts/me"));
    static final Operation ENTRIES = new Operation("GET /v1/accounts/me/entries", WRITE_ONLY,
            (spec, id) -> spec.get("/v1/accounts/me/entries?limit=1"));
    static final Operation CREDIT = new Operation("POST /v1/accounts/{principal}/credits", WRITE_ONLY, (spec, id) -> spec
            .contentType(ContentType.JSON).header("Idempotency-Key", Api.newKey())
            .body(Map.of("amount", 1, "currency", "EUR", "reference", "matrix")).post("/v1/accounts/matrix-alice/credits"));
    static final Operation DEV_TOKENS = new Operation("POST /dev/tokens (test build only)", READ_ONLY, (spec, id) -> spec
            .contentType(ContentType.JSON).body(Map.of("subject", "someone", "groups", List.of("transfers.read"))).post("/dev/tokens"));
    static final Operation SANDBOX_STATS = new Operation("GET /sandbox/provider/stats (test build only)", READ_ONLY,
            (spec, id) -> spec.get("/sandbox/provider/stats"));
    static final Operation SANDBOX_LOOKUP = new Operation("GET /sandbox/provider/payments/{ref} (test build only)", READ_ONLY,
            (spec, id) -> spec.get("/sandbox/provider/payments/ll_unknown"));

    static Stream<Arguments> matrix() {
        return Stream.of(
                row(CREATE, Caller.NO_TOKEN, 401),
                row(CREATE, Caller.WRONG_GROUP, 403),
                row(CREATE, Caller.READ_ALL, 403),
                row(CREATE, Caller.OWNER, 201),

                row(READ, Caller.NO_TOKEN, 401),
                row(READ, Caller.WRONG_GROUP, 403),
                row(READ, Caller.OTHER_PRINCIPAL, 404),
                row(READ, Caller.OWNER, 200),
                row(READ, Caller.READ_ALL, 200),

                row(EVENTS, Caller.NO_TOKEN, 401),
                row(EVENTS, Caller.WRONG_GROUP, 403),
                row(EVENTS, Caller.OTHER_PRINCIPAL, 404),
                row(EVENTS, Caller.OWNER, 200),
                row(EVENTS, Caller.READ_ALL, 200),

                // the owner's cancel is ScheduleAndCancelTest's: alice's transfer stays for the reads
                row(CANCEL, Caller.NO_TOKEN, 401),
                row(CANCEL, Caller.WRONG_GROUP, 403),
                row(CANCEL, Caller.OTHER_PRINCIPAL, 404),
                row(CANCEL, Caller.READ_ALL, 403),

                row(LIST, Caller.NO_TOKEN, 401),
                row(LIST, Caller.WRONG_GROUP, 403),
                row(LIST, Caller.OWNER, 403), // reading one's own transfers is not the operations listing
                row(LIST, Caller.READ_ALL, 200),

                // always the caller's own: another principal gets 200 and sees nothing of alice's (checked below)
                row(FIND_BY_KEY, Caller.NO_TOKEN, 401),
                row(FIND_BY_KEY, Caller.WRONG_GROUP, 403),
                row(FIND_BY_KEY, Caller.OTHER_PRINCIPAL, 200),
                row(FIND_BY_KEY, Caller.OWNER, 200),
                row(FIND_BY_KEY, Caller.READ_ALL, 200),

                row(OWN_LIST, Caller.NO_TOKEN, 401),
                row(OWN_LIST, Caller.WRONG_GROUP, 403),
                row(OWN_LIST, Caller.OTHER_PRINCIPAL, 200),
                row(OWN_LIST, Caller.OWNER, 200),
                row(OWN_LIST, Caller.READ_ALL, 200),

                // for internal services only: an end user's own transfers are not the whole feed
                row(FEED, Caller.NO_TOKEN, 401),
                row(FEED, Caller.WRONG_GROUP, 403),
                row(FEED, Caller.OWNER, 403),
                row(FEED, Caller.READ_ALL, 200),

                // the webhook endpoints are for whoever holds webhooks.admin, and for nobody else
                row(HOOKS_CREATE, Caller.NO_TOKEN, 401),
                row(HOOKS_CREATE, Caller.WRONG_GROUP, 403),
                row(HOOKS_CREATE, Caller.OWNER, 403),
                row(HOOKS_CREATE, Caller.READ_ALL, 403),
                row(HOOKS_CREATE, Caller.WEBHOOKS_ADMIN, 201),
                row(HOOKS_LIST, Caller.NO_TOKEN, 401),
                row(HOOKS_LIST, Caller.WRONG_GROUP, 403),
                row(HOOKS_LIST, Caller.OWNER, 403),
                row(HOOKS_LIST, Caller.READ_ALL, 403),
                row(HOOKS_LIST, Caller.WEBHOOKS_ADMIN, 200),
                row(HOOKS_DELETE, Caller.NO_TOKEN, 401),
                row(HOOKS_DELETE, Caller.WRONG_GROUP, 403),
                row(HOOKS_DELETE, Caller.OWNER, 403),
                row(HOOKS_DELETE, Caller.READ_ALL, 403),
                row(HOOKS_DELETE, Caller.WEBHOOKS_ADMIN, 404),
                row(HOOKS_ROTATE, Caller.NO_TOKEN, 401),
                row(HOOKS_ROTATE, Caller.WRONG_GROUP, 403),
                row(HOOKS_ROTATE, Caller.OWNER, 403),
                row(HOOKS_ROTATE, Caller.READ_ALL, 403),
                row(HOOKS_ROTATE, Caller.WEBHOOKS_ADMIN, 404),
                row(HOOKS_DELIVERIES, Caller.NO_TOKEN, 401),
                row(HOOKS_DELIVERIES, Caller.WRONG_GROUP, 403),
                row(HOOKS_DELIVERIES, Caller.OWNER, 403),
                row(HOOKS_DELIVERIES, Caller.READ_ALL, 403),
                row(HOOKS_DELIVERIES, Caller.WEBHOOKS_ADMIN, 404),
                // and a webhooks admin reads no transfer
                row(READ, Caller.WEBHOOKS_ADMIN, 403),
                row(FEED, Caller.WEBHOOKS_ADMIN, 403),

                // one's own balances and entries with the read scope; credits for the booking service alone
                row(BALANCES, Caller.NO_TOKEN, 401),
                row(BALANCES, Caller.WRONG_GROUP, 403),
                row(BALANCES, Caller.OWNER, 200),
                row(BALANCES, Caller.OTHER_PRINCIPAL, 200),
                row(BALANCES, Caller.READ_ALL, 403),
                row(BALANCES, Caller.BOOKING, 403),
                row(ENTRIES, Caller.NO_TOKEN, 401),
                row(ENTRIES, Caller.WRONG_GROUP, 403),
                row(ENTRIES, Caller.OWNER, 200),
                row(ENTRIES, Caller.OTHER_PRINCIPAL, 200),
                row(ENTRIES, Caller.READ_ALL, 403),
                row(ENTRIES, Caller.BOOKING, 403),
                row(CREDIT, Caller.NO_TOKEN, 401),
                row(CREDIT, Caller.WRONG_GROUP, 403),
                row(CREDIT, Caller.OWNER, 403),
                row(CREDIT, Caller.READ_ALL, 403),
                row(CREDIT, Caller.WEBHOOKS_ADMIN, 403),
                row(CREDIT, Caller.BOOKING, 201),

                // open in the test build on purpose (and absent from prod: PackagedJarIT)
                row(DEV_TOKENS, Caller.NO_TOKEN, 200),
                row(SANDBOX_STATS, Caller.NO_TOKEN, 200),
                row(SANDBOX_LOOKUP, Caller.NO_TOKEN, 404));
    }

    private static Arguments row(Operation operation, Caller caller, int status) {
        return Arguments.of(operation, caller, status);
    }

    /** alice's transfer, created once; every object read targets it. */
    private static volatile String alicesTransfer;

    @ParameterizedTest(name = "{0} as {1} -> {2}")
    @MethodSource("matrix")
    void everyOperationAnswersEveryCallerAsTheMatrixSays(Operation operation, Caller caller, int expected) {
        if (alicesTransfer == null) {
            alicesTransfer = Api.post(Api.token(Caller.OWNER.subject, Caller.OWNER.groups), "matrix:alice/1", Api.body(4200))
                    .then().statusCode(201).extract().path("id");
        }
        RequestSpecification spec = switch (caller) {
            case NO_TOKEN -> given();
            case WRONG_GROUP -> Api.as(Api.token("matrix-wrong-group", operation.wrongGroups()));
            default -> Api.as(Api.token(caller.subject, caller.groups));
        };
        Response response = operation.call().apply(spec, alicesTransfer);
        assertEquals(expected, response.statusCode(), operation + " as " + caller + ": " + response.asString());
        if (expected >= 400 && operation.name().contains("/v1/")) {
            assertEquals("application/problem+json", response.contentType().split(";")[0], response.asString());
        }
        if (expected == 401) {
            assertEquals("Bearer", response.header("WWW-Authenticate"));
        }
        if (operation == HOOKS_CREATE && expected == 201) {
            // nothing to deliver to: the endpoint goes again
            Api.as(Api.token(caller.subject, caller.groups)).delete("/v1/webhook-endpoints/" + response.jsonPath().getString("id"))
                    .then().statusCode(204);
        }
        if (operation == BALANCES || operation == ENTRIES) {
            if (expected == 200 && caller == Caller.OTHER_PRINCIPAL) {
                // alice's account is hers: another principal reads only its own
                assertEquals(List.of(), response.jsonPath().getList(operation == BALANCES ? "balances" : "items"));
            }
            return;
        }
        if (operation == FIND_BY_KEY || operation == OWN_LIST) {
            if (expected == 200) {
                List<String> ids = response.jsonPath().getList("items.id");
                assertEquals(caller == Caller.OWNER, ids.contains(alicesTransfer), operation + " as " + caller + ": " + ids);
            }
            return;
        }
        if (caller == Caller.OTHER_PRINCIPAL) {
            // indistinguishable from an id that does not exist
            Response missing = operation.call().apply(Api.as(Api.token(caller.subject, caller.groups)), UUID.randomUUID().toString());
            assertEquals(missing.statusCode(), response.statusCode());
            assertEquals(missing.jsonPath().getString("detail"), response.jsonPath().getString("detail"));
        }
    }
}
