package dev.ledgerline.transfers.support;

import io.restassured.http.ContentType;

import java.util.List;
import java.util.Map;

import static io.restassured.RestAssured.given;

/** Drives the sandbox provider the way its HTTP contract allows (README "The sandbox provider"). */
public final class Sandbox {

    private Sandbox() {
    }

    public static void faults(Map<String, Object> faults) {
        given().contentType(ContentType.JSON).body(faults).put("/sandbox/provider/faults").then().statusCode(200);
    }

    public static void reset() {
        given().delete("/sandbox/provider/faults").then().statusCode(204);
    }

    /** How many times the provider executed this reference (0 when it never saw it). */
    public static int executions(String reference) {
        var response = given().get("/sandbox/provider/payments/" + reference);
        if (response.statusCode() == 404) {
            return 0;
        }
        response.then().statusCode(200);
        return response.path("executions");
    }

    /** Every send the provider applied under this reference: what it was asked to pay, by when, and what it did. */
    public static List<Map<String, Object>> orders(String reference) {
        return given().queryParam("reference", reference).get("/sandbox/provider/orders").then().statusCode(200)
                .extract().jsonPath().getList("$");
    }

    public static long duplicateExecutions() {
        return ((Number) given().get("/sandbox/provider/stats").then().statusCode(200).extract().path("duplicateExecutions")).longValue();
    }
}
