package dev.ledgerline.transfers.support;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.restassured.specification.RequestSpecification;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.containsStringIgnoringCase;
import static org.hamcrest.MatcherAssert.assertThat;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The contract validation filter has teeth: against a stand-in server that answers whatever each test
 * scripts, a conforming exchange passes and every kind of deviation from {@code openapi.yaml} fails the
 * request that saw it. Plain JUnit, no Quarkus: it also shows the filter reaches tests that call
 * {@code given()} directly without going through {@link Api}.
 */
class ContractValidationTest {

    private static final String ID = "3f1c2a9e-5b7d-4c1e-9a8f-2d6b4e0c7a11";
    private static final String TRANSFER = """
            {"id": "%s", "status": "pending", "amount": 1250, "currency": "EUR",
             "destination": {"iban": "DE89370400440532013000", "name": "Ada Lovelace"}, "description": null,
             "providerReference": "ll_8c0f5e2b9d4a4f7e8b1c3a6d5e7f9012", "version": 0, "failureReason": null,
             "createdAt": "2025-11-03T09:15:27.481203Z", "updatedAt": "2025-11-03T09:15:27.481203Z", "executeAt": null%s}""";
    private static final String NOT_FOUND = """
            {"type": "https://ledgerline.dev/problems/not-found", "title": "Not found", "status": 404,
             "detail": "No transfer with this id is visible to you.", "instance": "/v1/transfers/x"}""";

    private static HttpServer server;
    private static volatile Scripted answer;

    private record Scripted(int status, Map<String, String> headers, String body) {
    }

    @BeforeAll
    static void standInServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", ContractValidationTest::answer);
        server.start();
    }

    @AfterAll
    static void stop() {
        server.stop(0);
    }

    @BeforeEach
    void installedWithoutApi() {
        assertTrue(ContractValidation.installed(), "the extension installs the filter before every test");
    }

    private static void answer(HttpExchange exchange) throws IOException {
        Scripted a = answer;
        exchange.getRequestBody().readAllBytes();
        a.headers().forEach((k, v) -> exchange.getResponseHeaders().add(k, v));
        byte[] body = a.body() == null ? new byte[0] : a.body().getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(a.status(), body.length == 0 ? -1 : body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }

    private static RequestSpecification client() {
        return given().baseUri("http://127.0.0.1").port(server.getAddress().getPort()).auth().oauth2("a.b.c");
    }

    private static void serve(int status, Map<String, String> headers, String body) {
        answer = new Scripted(status, headers, body);
    }

    private static final Map<String, String> JSON = Map.of("Content-Type", "application/json", "ETag", "\"0\"");
    private static final Map<String, String> PROBLEM = Map.of("Content-Type", "application/problem+json");

    @Test
    void aConformingAnswerPasses() {
        serve(200, JSON, TRANSFER.formatted(ID, ""));
        assertDoesNotThrow(() -> client().get("/v1/transfers/" + ID));
        serve(404, PROBLEM, NOT_FOUND);
        assertDoesNotThrow(() -> client().get("/v1/transfers/" + ID));
    }

    @Test
    void anUndocumentedStatusFails() {
        serve(202, JSON, TRANSFER.formatted(ID, ""));
        AssertionError e = assertThrows(AssertionError.class, () -> client().get("/v1/transfers/" + ID));
        assertThat(e.getMessage(), containsString("validation.response.status.unknown"));
    }

    @Test
    void anUndocumentedFieldFails() {
        serve(200, JSON, TRANSFER.formatted(ID, ", \"fee\": 3"));
        AssertionError e = assertThrows(AssertionError.class, () -> client().get("/v1/transfers/" + ID));
        assertThat(e.getMessage(), containsString("fee"));
    }

    @Test
    void aMissingRequiredFieldFails() {
        serve(200, JSON, TRANSFER.formatted(ID, "").replace("\"failureReason\": null,", ""));
        AssertionError e = assertThrows(AssertionError.class, () -> client().get("/v1/transfers/" + ID));
        assertThat(e.getMessage(), containsString("failureReason"));
    }

    @Test
    void anUndocumentedHeaderFails() {
        serve(200, Map.of("Content-Type", "application/json", "ETag", "\"0\"", "X-Debug", "1"), TRANSFER.formatted(ID, ""));
        AssertionError e = assertThrows(AssertionError.class, () -> client().get("/v1/transfers/" + ID));
        assertThat(e.getMessage(), containsStringIgnoringCase("X-Debug"));
    }

    @Test
    void aMissingRequiredHeaderFails() {
        serve(200, Map.of("Content-Type", "application/json"), TRANSFER.formatted(ID, ""));
        AssertionError e = assertThrows(AssertionError.class, () -> client().get("/v1/transfers/" + ID));
        assertThat(e.getMessage(), containsString("ETag"));
    }

    @Test
    void aHeaderValueOutsideItsSchemaFails() {
        serve(200, Map.of("Content-Type", "application/json", "ETag", "W/\"0\""), TRANSFER.formatted(ID, ""));
        AssertionError e = assertThrows(AssertionError.class, () -> client().get("/v1/transfers/" + ID));
        assertThat(e.getMessage(), containsString("validation.response.header.schema.pattern"));

        serve(201, Map.of("Content-Type", "application/json", "ETag", "\"0\"", "Location", "http://attacker.example/v1/transfers/" + ID),
                TRANSFER.formatted(ID, ""));
        e = assertThrows(AssertionError.class, () -> client().contentType("application/json").header("Idempotency-Key", "k1")
                .body("{\"amount\": 1, \"currency\": \"EUR\", \"destination\": {\"iban\": \"DE89370400440532013000\", \"name\": \"A\"}}")
                .post("/v1/transfers"));
        assertThat(e.getMessage(), containsString("does not match input string \"http://attacker.example"));
    }

    @Test
    void anUndocumentedContentTypeFails() {
        serve(404, Map.of("Content-Type", "text/html"), "<h1>Not found</h1>");
        assertThrows(AssertionError.class, () -> client().get("/v1/transfers/" + ID));
    }

    @Test
    void anUndocumentedPathFailsWhateverTheAnswer() {
        serve(404, PROBLEM, NOT_FOUND);
        AssertionError e = assertThrows(AssertionError.class, () -> client().get("/v1/accounts"));
        assertThat(e.getMessage(), containsString("validation.request.path.missing"));
    }

    @Test
    void anInvalidRequestCountsOnlyWhenTheServiceAcceptsIt() {
        String problem = NOT_FOUND.replace("not-found", "idempotency-key-missing").replace("404", "400");
        serve(400, PROBLEM, problem);
        assertDoesNotThrow(() -> client().contentType("application/json").body("{}").post("/v1/transfers"),
                "a 400 for a request without Idempotency-Key is the service agreeing with the contract");

        serve(201, Map.of("Content-Type", "application/json", "ETag", "\"0\"", "Location", "/v1/transfers/" + ID),
                TRANSFER.formatted(ID, ""));
        AssertionError e = assertThrows(AssertionError.class,
                () -> client().contentType("application/json").body("{}").post("/v1/transfers"));
        assertThat(e.getMessage(), containsString("Idempotency-Key"));
    }

    @Test
    void exchangesOutsideV1AreNotChecked() {
        serve(418, Map.of("Content-Type", "text/plain"), "teapot");
        assertDoesNotThrow(() -> client().post("/dev/tokens"));
        assertDoesNotThrow(() -> client().get("/sandbox/provider/stats"));
        assertDoesNotThrow(() -> client().get("/q/openapi"));
    }
}
