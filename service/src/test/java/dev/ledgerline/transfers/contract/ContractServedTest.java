package dev.ledgerline.transfers.contract;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Contract;
import dev.ledgerline.transfers.support.Management;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.TreeMap;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * A running instance serves the contract itself: {@code /q/openapi} is the top-level {@code openapi.yaml}
 * as written (not a document generated from the code) with one change, its server, which names the API's public
 * URL ({@code ledgerline.api-docs.public-url}) so that Swagger UI at {@code /q/swagger-ui}, on the management port,
 * calls the API and not itself.
 */
@QuarkusTest
class ContractServedTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void servesTheContractFileAsIs() throws Exception {
        Contract contract = Contract.standard();
        JsonNode served = JSON.readTree(Management.given().accept("application/json").get("/q/openapi").then()
                .statusCode(200)
                .contentType(containsString("json"))
                .extract().asString());

        assertEquals(operationIds(contract.root()), operationIds(served), "the same paths, methods and operationIds");
        List<String> differences = new ArrayList<>();
        diff("", withoutServers(contract.root()), withoutServers(served), differences);
        assertEquals(List.of(), differences, "the served document is the contract, field for field, its server aside");
    }

    @Test
    void servesThePublicUrlOfTheApiAsItsOnlyServer() throws Exception {
        JsonNode servers = servedDocument().path("servers");

        assertEquals(1, servers.size(), "one server: " + servers);
        assertEquals(ConfigProvider.getConfig().getValue("ledgerline.api-docs.public-url", String.class),
                servers.get(0).path("url").asText());
    }

    @Test
    void tryItOutReachesTheApiThroughTheServedServerUrl() throws Exception {
        String server = servedDocument().path("servers").get(0).path("url").asText();
        URI api = URI.create(server);

        // a fully qualified URL: REST Assured sends it as is, ignoring the suite's default host and port
        RestAssured.given()
                .auth().oauth2(Api.writer("try-it-out"))
                .contentType(ContentType.JSON)
                .header("Idempotency-Key", Api.newKey())
                .body(Api.body(1250))
                .post(server.replaceAll("/+$", "") + "/v1/transfers")
                .then()
                .statusCode(201)
                .header("Location", containsString("/v1/transfers/"));
        assertNotEquals(Management.port(), api.getPort(), "the served server is the API port, not the management port");
    }

    @Test
    void servesTheYamlFormToo() {
        Management.given().get("/q/openapi").then()
                .statusCode(200)
                .body(containsString("operationId: createTransfer"))
                .body(containsString("title: Ledgerline Transfers"));
    }

    @Test
    void swaggerUiLoadsTheServedContract() {
        Management.given().get("/q/swagger-ui/").then()
                .statusCode(200)
                .contentType(containsString("text/html"))
                .body(containsString("/q/openapi"));
    }

    private static JsonNode servedDocument() throws Exception {
        return JSON.readTree(Management.given().accept("application/json").get("/q/openapi").then()
                .statusCode(200).extract().asString());
    }

    private static JsonNode withoutServers(JsonNode document) {
        ObjectNode copy = document.deepCopy();
        copy.remove("servers");
        return copy;
    }

    /** JSON pointers where the two trees differ (member order aside), with both values. */
    static void diff(String pointer, JsonNode expected, JsonNode actual, List<String> out) {
        if (expected.isObject() && actual.isObject()) {
            Set<String> names = new TreeSet<>();
            expected.fieldNames().forEachRemaining(names::add);
            actual.fieldNames().forEachRemaining(names::add);
            for (String name : names) {
                String child = pointer + "/" + name.replace("~", "~0").replace("/", "~1");
                if (!expected.has(name)) {
                    out.add(child + ": added by the server: " + actual.get(name));
                } else if (!actual.has(name)) {
                    out.add(child + ": missing from the served document");
                } else {
                    diff(child, expected.get(name), actual.get(name), out);
                }
            }
        } else if (expected.isArray() && actual.isArray() && expected.size() == actual.size()) {
            for (int i = 0; i < expected.size(); i++) {
                diff(pointer + "/" + i, expected.get(i), actual.get(i), out);
            }
        } else if (!expected.equals(actual)) {
            out.add(pointer + ": " + expected + " in the contract, " + actual + " served");
        }
    }

    private static Map<String, String> operationIds(JsonNode document) {
        Map<String, String> ids = new TreeMap<>();
        document.path("paths").fields().forEachRemaining(path -> path.getValue().fields().forEachRemaining(method -> {
            if (method.getValue().has("operationId")) {
                ids.put(method.getKey().toUpperCase() + " " + path.getKey(), method.getValue().get("operationId").asText());
            }
        }));
        return ids;
    }
}
