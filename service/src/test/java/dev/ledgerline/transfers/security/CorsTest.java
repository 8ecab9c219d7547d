package dev.ledgerline.transfers.security;

import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Db;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A browser app on another origin can call the API exactly as far as the allow-list says
 * (docs/http.md "Browser clients and CORS"): a listed origin's preflight allows the headers the SDKs send, its
 * answers expose the headers the retry and polling helpers read, an unlisted origin gets no allow header
 * at all, and no answer ever pairs a wildcard origin with credentials.
 *
 * <p>Sent with the JDK's HTTP client rather than REST Assured: a preflight ({@code OPTIONS}) is part of the
 * CORS protocol, not an operation of the contract, so the contract validation must not see it.
 */
@QuarkusTest
class CorsTest {

    /** A local app server, as the dev and test profiles allow (any port on localhost or 127.0.0.1). */
    static final String LISTED = "http://localhost:5173";
    static final String UNLISTED = "https://attacker.example";
    static final List<String> CLIENT_HEADERS = List.of("authorization", "content-type", "idempotency-key", "if-none-match", "prefer");
    static final List<String> EXPOSED = List.of("location", "etag", "idempotent-replayed", "retry-after", "preference-applied");

    @TestHTTPResource("/")
    URI service;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void aListedOriginsPreflightForCreateAllowsEveryHeaderTheClientsSend() throws Exception {
        HttpResponse<String> preflight = preflight(LISTED, "POST", String.join(",", CLIENT_HEADERS));

        assertTrue(preflight.statusCode() / 100 == 2, "preflight status " + preflight.statusCode());
        assertEquals(Optional.of(LISTED), preflight.headers().firstValue("Access-Control-Allow-Origin"));
        assertTrue(tokens(preflight, "Access-Control-Allow-Methods").contains("post"), preflight.headers().toString());
        Set<String> allowed = tokens(preflight, "Access-Control-Allow-Headers");
        assertTrue(allowed.containsAll(CLIENT_HEADERS), "allowed headers " + allowed);
        assertNoCredentialedWildcard(preflight);
    }

    @Test
    void anUnlistedOriginsPreflightGetsNoAllowHeaders() throws Exception {
        HttpResponse<String> preflight = preflight(UNLISTED, "POST", "authorization,content-type,idempotency-key");

        assertAllowsNothing(preflight);
    }

    @Test
    void aCrossOriginCreateAndItsReplayExposeTheHeadersTheSdksRead() throws Exception {
        String token = Api.writer("cors-alice");
        String key = Api.newKey();

        HttpResponse<String> created = post(LISTED, token, key);
        assertEquals(201, created.statusCode(), created.body());
        assertEquals(Optional.of(LISTED), created.headers().firstValue("Access-Control-Allow-Origin"));
        assertTrue(tokens(created, "Access-Control-Expose-Headers").containsAll(EXPOSED), created.headers().toString());
        assertTrue(created.headers().firstValue("Location").isPresent());
        assertNoCredentialedWildcard(created);

        HttpResponse<String> replayed = post(LISTED, token, key);
        assertEquals(201, replayed.statusCode(), replayed.body());
        assertEquals(Optional.of("true"), replayed.headers().firstValue("Idempotent-Replayed"));
        assertTrue(tokens(replayed, "Access-Control-Expose-Headers").contains("idempotent-replayed"));

        String id = created.headers().firstValue("Location").orElseThrow().replaceAll(".*/", "");
        HttpResponse<String> read = send(HttpRequest.newBuilder(service.resolve("/v1/transfers/" + id))
                .header("Origin", LISTED).header("Authorization", "Bearer " + token).GET());
        assertEquals(200, read.statusCode());
        assertEquals(Optional.of(LISTED), read.headers().firstValue("Access-Control-Allow-Origin"));
        assertTrue(read.headers().firstValue("ETag").isPresent());
        assertTrue(tokens(read, "Access-Control-Expose-Headers").contains("etag"));
    }

    @Test
    void anUnlistedOriginsCreateIsRefusedWithoutAllowHeadersAndMovesNoMoney() throws Exception {
        String key = Api.newKey();

        HttpResponse<String> refused = post(UNLISTED, Api.writer("cors-mallory"), key);

        assertAllowsNothing(refused);
        assertNotEquals(201, refused.statusCode(), refused.body());
        assertEquals(0, Db.count("SELECT count(*) FROM transfers WHERE idempotency_key = ?", key));
    }

    @Test
    void aRequestWithoutOriginCarriesNoCorsHeaders() throws Exception {
        // mobile apps and services send no Origin: CORS must not change what they see
        String token = Api.writer("cors-service");
        HttpResponse<String> created = post(null, token, Api.newKey());
        assertEquals(201, created.statusCode(), created.body());
        // a read, and a preflight's request headers without the Origin that would make it one
        HttpResponse<String> read = send(HttpRequest.newBuilder(service.resolve(created.headers().firstValue("Location").orElseThrow()))
                .header("Authorization", "Bearer " + token).GET());
        assertEquals(200, read.statusCode(), read.body());
        HttpResponse<String> options = send(HttpRequest.newBuilder(service.resolve("/v1/transfers"))
                .method("OPTIONS", HttpRequest.BodyPublishers.noBody())
                .header("Access-Control-Request-Method", "POST")
                .header("Access-Control-Request-Headers", "authorization,content-type,idempotency-key"));

        for (HttpResponse<String> answer : List.of(created, read, options)) {
            assertTrue(answer.headers().map().keySet().stream().noneMatch(h -> h.toLowerCase(Locale.ROOT).startsWith("access-control-")),
                    answer.headers().toString());
        }
    }

    private HttpResponse<String> preflight(String origin, String method, String headers) throws IOException, InterruptedException {
        return send(HttpRequest.newBuilder(service.resolve("/v1/transfers"))
                .method("OPTIONS", HttpRequest.BodyPublishers.noBody())
                .header("Origin", origin)
                .header("Access-Control-Request-Method", method)
                .header("Access-Control-Request-Headers", headers));
    }

    private HttpResponse<String> post(String origin, String token, String key) throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(service.resolve("/v1/transfers"))
                .header("Authorization", "Bearer " + token)
                .header("Content-Type", "application/json")
                .header("Idempotency-Key", key)
                .POST(HttpRequest.BodyPublishers.ofString(Api.body(1250)));
        if (origin != null) {
            request.header("Origin", origin);
        }
        return send(request);
    }

    private HttpResponse<String> send(HttpRequest.Builder request) throws IOException, InterruptedException {
        return http.send(request.timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static Set<String> tokens(HttpResponse<?> response, String header) {
        return response.headers().allValues(header).stream()
                .flatMap(v -> Arrays.stream(v.split(",")))
                .map(v -> v.strip().toLowerCase(Locale.ROOT))
                .filter(v -> !v.isEmpty())
                .collect(Collectors.toCollection(TreeSet::new));
    }

    private static void assertAllowsNothing(HttpResponse<?> response) {
        for (String header : List.of("Access-Control-Allow-Origin", "Access-Control-Allow-Headers", "Access-Control-Allow-Methods",
                "Access-Control-Allow-Credentials", "Access-Control-Expose-Headers")) {
            assertFalse(response.headers().firstValue(header).isPresent(), header + " in " + response.headers());
        }
    }

    private static void assertNoCredentialedWildcard(HttpResponse<?> response) {
        assertNotEquals(Optional.of("*"), response.headers().firstValue("Access-Control-Allow-Origin"));
        assertNotEquals(Optional.of("true"), response.headers().firstValue("Access-Control-Allow-Credentials"));
    }
}
