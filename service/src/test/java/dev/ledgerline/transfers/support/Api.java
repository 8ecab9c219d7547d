package dev.ledgerline.transfers.support;

import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;

import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

import static io.restassured.RestAssured.given;

/** The calls tests make, as a client would: tokens from {@code /dev/tokens}, JSON bodies, bearer auth. */
public final class Api {

    public static final String IBAN = "DE89370400440532013000";
    public static final List<String> WRITER = List.of("transfers.write", "transfers.read");

    private static final Map<String, String> TOKENS = new ConcurrentHashMap<>();

    static {
        RestAssured.enableLoggingOfRequestAndResponseIfValidationFails();
        ContractValidation.install();
    }

    private Api() {
    }

    public static String token(String subject, List<String> groups) {
        return TOKENS.computeIfAbsent(subject + "|" + String.join(",", groups), k -> given()
                .contentType(ContentType.JSON)
                .body(Map.of("subject", subject, "groups", groups))
                .post("/dev/tokens")
                .then().statusCode(200)
                .extract().path("token"));
    }

    public static String writer(String subject) {
        return token(subject, WRITER);
    }

    public static String body(long amount) {
        return body(amount, "EUR", "Rent November");
    }

    public static String body(long amount, String currency, String description) {
        return """
                {"amount": %d, "currency": "%s", "destination": {"iban": "%s", "name": "Ada Lovelace"}, "description": "%s"}"""
                .formatted(amount, currency, IBAN, description);
    }

    public static String newKey() {
        return UUID.randomUUID().toString();
    }

    public static RequestSpecification as(String token) {
        return given().auth().oauth2(token);
    }

    public static Response post(String token, String key, String body) {
        return post(token, key, body, r -> r);
    }

    /** {@link #post(String, String, String)} with whatever {@code more} adds to the request (headers, say). */
    public static Response post(String token, String key, String body, java.util.function.UnaryOperator<RequestSpecification> more) {
        return more.apply(as(token).contentType(ContentType.JSON).header("Idempotency-Key", key).body(body)).post("/v1/transfers");
    }

    /** Creates a transfer and returns its id. */
    public static String create(String token, long amount) {
        return post(token, newKey(), body(amount)).then().statusCode(201).extract().path("id");
    }

    public static Response get(String token, String id) {
        return as(token).get("/v1/transfers/" + id);
    }

    /** The caller's balance in {@code currency} as {@code [posted, held, available]}; {@code null} without an account there. */
    public static long[] balance(String token, String currency) {
        List<Map<String, Object>> balances = as(token).get("/v1/accounts/me").then().statusCode(200).extract().jsonPath()
                .getList("balances");
        for (Map<String, Object> b : balances) {
            if (currency.equals(b.get("currency"))) {
                return new long[]{((Number) b.get("posted")).longValue(), ((Number) b.get("held")).longValue(),
                        ((Number) b.get("available")).longValue()};
            }
        }
        return null;
    }

    public static String status(String id) {
        return get(writer("alice"), id).then().extract().path("status");
    }
}
