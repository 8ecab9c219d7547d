package dev.ledgerline.transfers.support;

import io.restassured.http.ContentType;

import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/** Drives the sandbox provider the way its HTTP contract allows (docs/provider.md "The sandbox provider"). */
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

    /**
     * Exactly one execution at the provider, and it paid what the transfer's row holds — amount, currency, IBAN and
     * name — under the deadline ({@code Ledgerline-Not-After}) the transfer's latest claim stored.
     */
    public static void exactlyOneExecution(String id) {
        String reference = Rows.reference(id);
        assertEquals(1, executions(reference), "exactly one execution at the provider for " + id);
        Map<String, Object> row = Db.query("SELECT amount, currency, destination_iban, destination_name, send_not_after "
                + "FROM transfers WHERE id = ?::uuid", id).get(0);
        List<Map<String, Object>> executed = orders(reference).stream()
                .filter(o -> "executed".equals(o.get("outcome"))).toList();
        assertEquals(1, executed.size(), "one executed order for " + id + ": " + orders(reference));
        Map<String, Object> order = executed.get(0);
        assertEquals(row.get("amount"), ((Number) order.get("amount")).longValue(), "paid amount");
        assertEquals(row.get("currency"), order.get("currency"), "paid currency");
        assertEquals(row.get("destination_iban"), order.get("iban"), "paid IBAN");
        assertEquals(row.get("destination_name"), order.get("name"), "paid beneficiary");
        assertNotNull(order.get("notAfter"), "the send carried Ledgerline-Not-After: " + order);
        assertEquals(((Timestamp) row.get("send_not_after")).toInstant(), Instant.parse((String) order.get("notAfter")),
                "the executed send carried the deadline its claim stored");
    }

    public static long duplicateExecutions() {
        return ((Number) given().get("/sandbox/provider/stats").then().statusCode(200).extract().path("duplicateExecutions")).longValue();
    }
}
