package dev.ledgerline.transfers.api;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.UUID;

import static dev.ledgerline.transfers.support.Api.writer;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The methods each {@code /v1} resource answers ({@link AllowedMethods}): a 405 names them in {@code Allow},
 * {@code OPTIONS} answers them without a token, and {@code HEAD} is a {@code GET} without its body.
 */
@QuarkusTest
class AllowedMethodsTest {

    private static final String TRANSFERS_PROBLEM = "application/problem+json";

    @TestHTTPResource("/")
    URL base;

    /** Methods the contract does not list, so sent past REST Assured's contract check, with a plain client. */
    @Test
    void a405NamesTheAllowedMethodsAndOptionsAnswersThem() throws Exception {
        String token = writer("methods");
        String id = UUID.randomUUID().toString();
        HttpClient client = HttpClient.newHttpClient();
        assertAnswer(client, "DELETE", "/v1/transfers", token, 405, AllowedMethods.COLLECTION);
        assertAnswer(client, "PUT", "/v1/transfers/" + id, token, 405, AllowedMethods.ITEM);
        assertAnswer(client, "POST", "/v1/transfers/" + id, token, 405, AllowedMethods.ITEM);
        assertAnswer(client, "DELETE", "/v1/transfers/" + id + "/events", token, 405, AllowedMethods.ITEM);
        assertAnswer(client, "RTLONG", "/v1/transfers", null, 405, AllowedMethods.COLLECTION);
        assertAnswer(client, "OPTIONS", "/v1/transfers", null, 204, AllowedMethods.COLLECTION);
        assertAnswer(client, "OPTIONS", "/v1/transfers/" + id, null, 204, AllowedMethods.ITEM);
        assertAnswer(client, "OPTIONS", "/v1/me/transfers", null, 204, AllowedMethods.ITEM);
        assertAnswer(client, "POST", "/v1/me/transfers", token, 405, AllowedMethods.ITEM);
        // HEAD is GET without a body: the same status, authorization included
        assertAnswer(client, "HEAD", "/v1/transfers/" + id, null, 401, null);
        assertAnswer(client, "HEAD", "/v1/transfers/" + id, token, 404, null);
    }

    private void assertAnswer(HttpClient client, String method, String path, String token, int status, String allow) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base.toString()).resolve(path))
                .method(method, HttpRequest.BodyPublishers.noBody());
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        HttpResponse<String> answer = client.send(request.build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(status, answer.statusCode(), method + " " + path + ": " + answer.body());
        if (allow != null) {
            assertEquals(allow, answer.headers().firstValue("Allow").orElse(null), method + " " + path);
        }
        if (status == 405) {
            assertEquals(TRANSFERS_PROBLEM, answer.headers().firstValue("Content-Type").orElse(""));
        }
    }
}
