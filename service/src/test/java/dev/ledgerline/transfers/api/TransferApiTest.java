package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.problem.ProblemType;
import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Db;
import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.jwt.build.Jwt;
import org.junit.jupiter.api.Test;

import java.security.KeyPairGenerator;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.UUID;

import static dev.ledgerline.transfers.support.Api.as;
import static dev.ledgerline.transfers.support.Api.body;
import static dev.ledgerline.transfers.support.Api.newKey;
import static dev.ledgerline.transfers.support.Api.writer;
import static dev.ledgerline.transfers.support.Issuer.devKey;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.matchesPattern;
import static org.hamcrest.Matchers.notNullValue;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertEquals;

@QuarkusTest
class TransferApiTest {

    @Test
    void createsATransferAndReadsItBack() {
        String token = writer("alice");
        String id = Api.post(token, newKey(), body(1250))
                .then()
                .statusCode(201)
                .header("Location", matchesPattern(".*/v1/transfers/[0-9a-f-]{36}$"))
                .header("Idempotent-Replayed", nullValue())
                .contentType("application/json")
                .body("status", equalTo("pending"))
                .body("amount", equalTo(1250))
                .body("currency", equalTo("EUR"))
                .body("destination.iban", equalTo(Api.IBAN))
                .body("destination.name", equalTo("Ada Lovelace"))
                .body("description", equalTo("Rent November"))
                .body("providerReference", notNullValue())
                .body("version", equalTo(0))
                .extract().path("id");

        Api.get(token, id).then()
                .statusCode(200)
                .header("ETag", notNullValue())
                .body("id", equalTo(id))
                .body("amount", equalTo(1250));

        assertEquals(1, Db.count("SELECT count(*) FROM transfers WHERE id = ?::uuid AND user_id = 'alice'", id));
    }

    @Test
    void anUnknownIdIsNotFound() {
        Api.get(writer("alice"), UUID.randomUUID().toString()).then()
                .statusCode(404)
                .contentType("application/problem+json")
                .body("type", equalTo(ProblemType.NOT_FOUND.uri()));
        Api.get(writer("alice"), "not-a-uuid").then().statusCode(404);
    }

    @Test
    void anotherPrincipalsTransferIsNotFoundRatherThanForbidden() {
        String id = Api.create(writer("alice"), 500);
        Api.get(writer("mallory"), id).then()
                .statusCode(404)
                .contentType("application/problem+json");
        as(writer("mallory")).get("/v1/transfers/" + id + "/events").then().statusCode(404);
    }

    @Test
    void aReadAllCallerSeesAnyTransfer() {
        String id = Api.create(writer("alice"), 700);
        Api.get(Api.token("ledger-ops", List.of("transfers.read.all")), id).then()
                .statusCode(200)
                .body("id", equalTo(id));
    }

    @Test
    void missingTokenIsUnauthorized() {
        given().contentType("application/json").header("Idempotency-Key", newKey()).body(body(100))
                .post("/v1/transfers")
                .then()
                .statusCode(401)
                .header("WWW-Authenticate", "Bearer")
                .contentType("application/problem+json");
        given().get("/v1/transfers/" + UUID.randomUUID()).then().statusCode(401);
    }

    @Test
    void aTokenSignedByAnotherKeyIsUnauthorized() throws Exception {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
        generator.initialize(2048);
        String forged = Jwt.issuer("https://ledgerline.dev/dev-issuer").audience("ledgerline-transfers")
                .subject("alice").groups(Set.of("transfers.write", "transfers.read"))
                .sign(generator.generateKeyPair().getPrivate());
        Api.post(forged, newKey(), body(100)).then().statusCode(401).contentType("application/problem+json");
    }

    @Test
    void anExpiredTokenIsUnauthorized() throws Exception {
        String expired = Jwt.issuer("https://ledgerline.dev/dev-issuer").audience("ledgerline-transfers")
                .subject("alice").groups(Set.of("transfers.write", "transfers.read"))
                .issuedAt(Instant.now().minusSeconds(7200))
                .expiresAt(Instant.now().minusSeconds(3600))
                .sign(devKey());
        Api.post(expired, newKey(), body(100)).then().statusCode(401);
        Api.get(expired, UUID.randomUUID().toString()).then().statusCode(401);
    }

    @Test
    void aTokenForAnotherAudienceIsUnauthorized() throws Exception {
        String wrongAudience = Jwt.issuer("https://ledgerline.dev/dev-issuer").audience("someone-else")
                .subject("alice").groups(Set.of("transfers.write", "transfers.read"))
                .sign(devKey());
        Api.post(wrongAudience, newKey(), body(100)).then().statusCode(401);
    }

    @Test
    void aMissingGroupIsForbidden() {
        String readOnly = Api.token("reader", List.of("transfers.read"));
        Api.post(readOnly, newKey(), body(100)).then()
                .statusCode(403)
                .contentType("application/problem+json")
                .body("type", equalTo(ProblemType.FORBIDDEN.uri()));
        String writeOnly = Api.token("writer-only", List.of("transfers.write"));
        Api.get(writeOnly, UUID.randomUUID().toString()).then().statusCode(403);
        assertEquals(0, Db.count("SELECT count(*) FROM transfers WHERE user_id = 'reader'"));
    }
}
