package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Await;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.Metrics;
import dev.ledgerline.transfers.support.Sandbox;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.http.Header;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

import static dev.ledgerline.transfers.support.Api.as;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;

/**
 * The replay route ({@link ReplayRoute}) answers a kept replay in front of Quarkus REST, and a client cannot tell:
 * its answer is the resource's answer, header for header and byte for byte; every request it does not take exactly
 * as the resource would goes on to the resource and is answered as before.
 */
@QuarkusTest
class ReplayRouteTest {

    @Inject
    ReplayRoute route;

    private static final Duration DEADLINE = Duration.ofSeconds(30);

    @TestHTTPResource("/")
    URL base;

    @Test
    void theRouteRunsInFrontOfTheFiltersWhereNoPolicyApplies() {
        // Quarkus's path policies are there, with no path configured: the authorization filter applies nothing
        assertEquals(ReplayRoute.EARLY, route.installedAt());
    }

    @Test
    void aKeptReplayIsAnsweredByTheRouteExactlyAsTheResourceAnswersIt() throws Exception {
        String token = Api.writer("route-" + UUID.randomUUID());
        String key = Api.newKey();
        String body = Api.body(4_101);
        String id = Api.post(token, key, body).then().statusCode(201).extract().path("id");
        Await.status(id, "sent", DEADLINE);
        Api.post(token, key, body).then().statusCode(201); // the first replay after sent keeps the final transfer

        double early = early();
        // an Accept the route leaves to content negotiation: the resource answers
        Response byResource = Api.post(token, key, body, r -> r.accept("application/json, */*;q=0.5"));
        assertEquals(early, early(), "the resource answered this one");
        double served = Metrics.sum("http_server_requests_seconds_count", SERVED_201);
        Response byRoute = Api.post(token, key, body);
        assertEquals(early + 1, early(), "the route answered this one");
        // in front of the authentication filters, yet in the HTTP metrics under the endpoint's template as before
        assertEquals(served + 1, Metrics.sum("http_server_requests_seconds_count", SERVED_201));

        assertEquals(201, byRoute.statusCode());
        assertEquals(headers(byResource), headers(byRoute));
        assertArrayEquals(byResource.asByteArray(), byRoute.asByteArray());
        byRoute.then().header("Idempotent-Replayed", "true").header("Location", "/v1/transfers/" + id)
                .body("status", equalTo("sent")).body("amount", equalTo(4_101));

        // a cross-origin caller (a browser: Origin) is the CORS filter's and the resource's, with or without a plain
        // Accept, and the answer is the same (the contract leaves CORS out)
        HttpResponse<byte[]> corsPlain = crossOrigin(token, key, body, null);
        HttpResponse<byte[]> corsByResource = crossOrigin(token, key, body, "application/json, */*;q=0.5");
        assertEquals(early + 1, early(), "the route leaves a request with Origin to the filters");
        assertEquals(201, corsPlain.statusCode());
        assertEquals("http://localhost:3000", corsPlain.headers().firstValue("Access-Control-Allow-Origin").orElse(null));
        assertEquals(headers(corsByResource), headers(corsPlain));
        assertArrayEquals(corsByResource.body(), corsPlain.body());
    }

    private HttpResponse<byte[]> crossOrigin(String token, String key, String body, String accept) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(base.toURI().resolve("/v1/transfers"))
                .header("Origin", "http://localhost:3000").header("Authorization", "Bearer " + token)
                .header("Content-Type", "application/json").header("Idempotency-Key", key)
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (accept != null) {
            request.header("Accept", accept);
        }
        HttpClient http1 = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        return http1.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    @Test
    void whatTheRouteDoesNotTakeExactlyGoesOnToTheResource() throws Exception {
        String subject = "route-" + UUID.randomUUID();
        String token = Api.writer(subject);
        String key = Api.newKey();
        String body = Api.body(4_102);
        String id = Api.post(token, key, body).then().statusCode(201).extract().path("id");
        Await.status(id, "sent", DEADLINE);
        Api.post(token, key, body).then().statusCode(201);
        double early = early();

        // another body under the key: 422 from the resource
        Api.post(token, key, Api.body(4_103)).then().statusCode(422);
        // a reader's token: 403, whatever the entry holds
        Api.post(Api.token(subject, List.of("transfers.read")), key, body).then().statusCode(403);
        // a token never seen: verified in full by the HTTP authentication, then replayed
        Api.post(Api.token(subject, List.of("transfers.read", "transfers.write")), key, body).then().statusCode(201).header("Idempotent-Replayed", "true");
        // a second Idempotency-Key: 400
        as(token).contentType(ContentType.JSON).header("Idempotency-Key", key).header(new Header("Idempotency-Key", Api.newKey()))
                .body(body).post("/v1/transfers").then().statusCode(400);
        // a long poll
        Api.post(token, key, body, r -> r.header("Prefer", "wait=1")).then().statusCode(201);
        // a body in another charset: 415
        as(token).contentType("application/json; charset=ISO-8859-1").header("Idempotency-Key", key).body(body.getBytes())
                .post("/v1/transfers").then().statusCode(415);
        // no token at all: 401
        io.restassured.RestAssured.given().contentType(ContentType.JSON).header("Idempotency-Key", key).body(body)
                .post("/v1/transfers").then().statusCode(401);
        // over HTTP/2 (h2c): the resource
        HttpResponse<byte[]> overHttp2 = HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).build().send(
                HttpRequest.newBuilder(base.toURI().resolve("/v1/transfers")).header("Authorization", "Bearer " + token)
                        .header("Content-Type", "application/json").header("Idempotency-Key", key)
                        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofByteArray());
        assertEquals(201, overHttp2.statusCode());
        assertEquals(HttpClient.Version.HTTP_2, overHttp2.version());
        assertEquals(early, early(), "none of them was answered by the route");
        double createdByRoute = created();

        assertEquals(created(), createdByRoute, "nor created by it");
    }

    /**
     * A first use of a key is created by the route and answered as the resource answers one: the same status, the same
     * headers but the transfer's own Location, and the same bytes but the transfer's own id, reference and times. It
     * is one transfer, sent once, and a retry of it is a replay.
     */
    @Test
    void aFirstUseIsCreatedByTheRouteAndAnsweredAsTheResourceAnswersIt() {
        String token = Api.writer("route-" + UUID.randomUUID());
        double createdEarly = created();
        // an Accept the route leaves to content negotiation: the resource creates this one
        String resourceKey = Api.newKey();
        Response byResource = Api.post(token, resourceKey, Api.body(4_105), r -> r.accept("application/json, */*;q=0.5"));
        assertEquals(createdEarly, created(), "the resource created this one");
        String routeKey = Api.newKey();
        Response byRoute = Api.post(token, routeKey, Api.body(4_105));
        assertEquals(createdEarly + 1, created(), "the route created this one");

        assertEquals(201, byResource.statusCode());
        assertEquals(201, byRoute.statusCode());
        String routeId = byRoute.path("id");
        String resourceId = byResource.path("id");
        byRoute.then().header("Location", "/v1/transfers/" + routeId).header("Idempotent-Replayed", (String) null);
        Map<String, List<String>> resourceHeaders = headers(byResource);
        Map<String, List<String>> routeHeaders = headers(byRoute);
        resourceHeaders.remove("location");
        routeHeaders.remove("location");
        // the lengths differ when the times do (a printed time drops its fraction's trailing zeros): each
        // must be its own body's length
        assertEquals(List.of(String.valueOf(byResource.asByteArray().length)), resourceHeaders.remove("content-length"));
        assertEquals(List.of(String.valueOf(byRoute.asByteArray().length)), routeHeaders.remove("content-length"));
        assertEquals(resourceHeaders, routeHeaders);
        assertEquals(comparable(byResource.asString(), resourceId), comparable(byRoute.asString(), routeId));

        Await.status(routeId, "sent", DEADLINE);
        assertEquals(1, Db.count("SELECT count(*) FROM transfers WHERE idempotency_key = ?", routeKey));
        Sandbox.exactlyOneExecution(routeId);
        Api.post(token, routeKey, Api.body(4_105)).then().statusCode(201).header("Idempotent-Replayed", "true")
                .body("id", equalTo(routeId));
    }

    /** A transfer's answer with what differs between any two transfers (id, provider reference, times) blanked out. */
    private static String comparable(String body, String id) {
        return body.replace(id, "ID").replaceAll("\"providerReference\":\"[^\"]*\"", "\"providerReference\":\"R\"")
                .replaceAll("\"(createdAt|updatedAt)\":\"[^\"]*\"", "\"$1\":\"T\"");
    }

    /** The HTTP server metrics' series of 201 answers to {@code POST /v1/transfers}. */
    private static final String SERVED_201 = "method=\"POST\",outcome=\"SUCCESS\",status=\"201\",uri=\"/v1/transfers\"";

    private static double early() {
        return Math.max(0, Metrics.sum("ledgerline_replays_early_total", ""));
    }

    private static double created() {
        return Math.max(0, Metrics.sum("ledgerline_transfers_created_early_total", ""));
    }

    /** The answer's headers, by lower-case name, without the ones that differ between any two answers. */
    private static Map<String, List<String>> headers(HttpResponse<?> r) {
        Map<String, List<String>> all = new TreeMap<>();
        r.headers().map().forEach((name, values) -> {
            if (!name.equalsIgnoreCase("date")) {
                all.put(name.toLowerCase(), values);
            }
        });
        return all;
    }

    private static Map<String, List<String>> headers(Response r) {
        Map<String, List<String>> all = new TreeMap<>();
        for (Header h : r.getHeaders()) {
            if (!h.getName().equalsIgnoreCase("date")) {
                all.computeIfAbsent(h.getName().toLowerCase(), n -> new java.util.ArrayList<>()).add(h.getValue());
            }
        }
        return all;
    }
}
