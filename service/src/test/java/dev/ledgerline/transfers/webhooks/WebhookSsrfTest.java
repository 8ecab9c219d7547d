package dev.ledgerline.transfers.webhooks;

import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.SideSettings;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;

/**
 * With private hosts not allowed (the prod setting; http stays allowed here so the address check, not the scheme,
 * is what refuses), registering an endpoint that reaches inside the network is a 400 problem naming the url.
 */
@QuarkusTest
@TestProfile(SideSettings.class)
class WebhookSsrfTest {

    @Test
    void internalAddressesAreRefused() {
        String admin = Api.token("hooks-admin", List.of("webhooks.admin"));
        for (String url : List.of("http://10.0.0.1/", "http://169.254.169.254/latest/meta-data/", "http://127.0.0.1:8080/x",
                "http://[::1]/x", "http://localhost/x", "http://[::ffff:192.168.0.1]/x", "ftp://example.com/x", "not a url")) {
            Api.as(admin).contentType(ContentType.JSON).body(Map.of("url", url)).post("/v1/webhook-endpoints").then()
                    .statusCode(400)
                    .contentType("application/problem+json")
                    .body("type", equalTo("https://ledgerline.dev/problems/validation-failed"))
                    .body("errors.field", hasItem("url"));
        }
    }
}
