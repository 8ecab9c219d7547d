package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.problem.ProblemType;
import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.Rows;
import io.restassured.path.json.JsonPath;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static dev.ledgerline.transfers.support.Api.as;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A principal's own transfers: found by the Idempotency-Key they were created under
 * ({@code GET /v1/transfers?idempotencyKey=}) and listed newest first ({@code GET /v1/me/transfers}). The invariant
 * of both: another principal's transfer is never visible, whatever the key or the page.
 */
@QuarkusTest
class OwnTransfersTest {

    private static final String PROBLEM = "application/problem+json";

    private static String subject(String name) {
        return name + "-" + UUID.randomUUID();
    }

    private static JsonPath byKey(String token, String key) {
        return as(token).queryParam("idempotencyKey", key).get("/v1/transfers").then()
                .statusCode(200).body("nextCursor", nullValue()).extract().jsonPath();
    }

    @Test
    void findsTheCallersTransferByTheKeyItWasCreatedUnderKeysWithColonAndSlashIncluded() {
        String alice = Api.writer(subject("key-alice"));
        String key = "order:42/retry-" + UUID.randomUUID();
        String id = Api.post(alice, key, Api.body(1250)).then().statusCode(201).extract().path("id");

        JsonPath page = byKey(alice, key);
        assertEquals(List.of(id), page.getList("items.id"));
        assertEquals(1250, page.getInt("items[0].amount"));
        assertEquals(id, Db.query("SELECT id::text AS id FROM transfers WHERE idempotency_key = ?", key).get(0).get("id"));

        // percent-encoded by hand, exactly as a client that encodes every reserved character sends it
        as(alice).urlEncodingEnabled(false).get("/v1/transfers?idempotencyKey=" + key.replace(":", "%3A").replace("/", "%2F"))
                .then().statusCode(200).body("items.id", equalTo(List.of(id)));
        // the header's sf-string form names the same key
        assertEquals(List.of(id), byKey(alice, "\"" + key + "\"").getList("items.id"));
    }

    @Test
    void anotherPrincipalsTransferUnderTheSameKeyIsNeverVisible() {
        String alice = Api.writer(subject("key-owner"));
        String mallory = Api.writer(subject("key-mallory"));
        String bob = Api.writer(subject("key-bob"));
        String ops = Api.token(subject("key-ops"), List.of("transfers.read.all"));
        String key = "shared:key/" + UUID.randomUUID();
        String alices = Api.post(alice, key, Api.body(100)).then().statusCode(201).extract().path("id");
        String mallorys = Api.post(mallory, key, Api.body(200)).then().statusCode(201).extract().path("id");
        assertEquals(2, Db.count("SELECT count(*) FROM transfers WHERE idempotency_key = ?", key), "one transfer per principal");

        assertEquals(List.of(alices), byKey(alice, key).getList("items.id"));
        assertEquals(List.of(mallorys), byKey(mallory, key).getList("items.id"));
        // a principal that never used the key, even one that reads every transfer by id, finds nothing under it
        assertEquals(List.of(), byKey(bob, key).getList("items"));
        assertEquals(List.of(), byKey(ops, key).getList("items"));
        // as on GET /v1/transfers/{id}: another principal's transfer is invisible to an end user
        Api.get(mallory, alices).then().statusCode(404);
    }

    @Test
    void aKeyNoTransferWasCreatedUnderIsAnEmptyPage() {
        String carol = Api.writer(subject("key-carol"));
        String key = "never-used-" + UUID.randomUUID();
        as(carol).queryParam("idempotencyKey", key).get("/v1/transfers").then()
                .statusCode(200).body("items", empty()).body("nextCursor", nullValue());
        assertEquals(0, Db.count("SELECT count(*) FROM transfers WHERE idempotency_key = ?", key));
    }

    @Test
    void aKeyTheHeaderWouldRefuseIsA400NamingIt() {
        String dave = Api.writer(subject("key-dave"));
        for (String invalid : List.of("two words", "", "x".repeat(256), "\"unterminated", "caf\u00e9")) {
            as(dave).queryParam("idempotencyKey", invalid).get("/v1/transfers").then()
                    .statusCode(400).contentType(PROBLEM)
                    .body("type", equalTo(ProblemType.VALIDATION_FAILED.uri()))
                    .body("errors.field", equalTo(List.of("idempotencyKey")));
        }
        // a lookup names one transfer: the listing's parameters are refused next to it, not ignored
        as(dave).queryParam("idempotencyKey", "k-1").queryParam("status", "sent").queryParam("limit", 5).get("/v1/transfers").then()
                .statusCode(400).body("errors.field", equalTo(List.of("status", "limit")));
    }

    @Test
    void eachReadNeedsItsGroup() {
        String writeOnly = Api.token(subject("scope-writer"), List.of("transfers.write"));
        String readOnly = Api.token(subject("scope-reader"), List.of("transfers.read"));
        as(writeOnly).queryParam("idempotencyKey", "k-1").get("/v1/transfers").then().statusCode(403).contentType(PROBLEM);
        as(writeOnly).get("/v1/me/transfers").then().statusCode(403).contentType(PROBLEM)
                .body("type", equalTo(ProblemType.FORBIDDEN.uri()));
        given().queryParam("idempotencyKey", "k-1").get("/v1/transfers").then().statusCode(401);
        given().get("/v1/me/transfers").then().statusCode(401);
        // the operations listing stays transfers.read.all's, and says where one's own transfers are
        as(readOnly).get("/v1/transfers").then().statusCode(403).contentType(PROBLEM)
                .body("type", equalTo(ProblemType.FORBIDDEN.uri()))
                .body("detail", org.hamcrest.Matchers.containsString("/v1/me/transfers"));
        as(readOnly).queryParam("limit", 0).get("/v1/transfers").then().statusCode(403);
        as(readOnly).get("/v1/me/transfers").then().statusCode(200).body("items", empty());
    }

    /** Every page of the caller's listing, following {@code nextCursor}; the rows of each page as a list. */
    private static List<List<String>> pages(String token, Map<String, Object> params) {
        List<List<String>> pages = new ArrayList<>();
        String cursor = null;
        do {
            var request = as(token).queryParams(params);
            if (cursor != null) {
                request.queryParam("after", cursor);
            }
            JsonPath page = request.get("/v1/me/transfers").then().statusCode(200).extract().jsonPath();
            pages.add(page.getList("items.id"));
            cursor = page.getString("nextCursor");
        } while (cursor != null && pages.size() < 50);
        return pages;
    }

    private static List<String> newestFirst(String owner, String status) {
        return Db.query("SELECT id::text AS id FROM transfers WHERE user_id = ? AND (?::text IS NULL OR status = ?::text) "
                        + "ORDER BY created_at DESC, id DESC", owner, status, status)
                .stream().map(r -> (String) r.get("id")).toList();
    }

    @Test
    void theOwnListingPagesNewestFirstWithoutDuplicatesOrSkipsAndNeverShowsAnotherPrincipal() {
        String owner = subject("lister");
        String other = subject("lister-other");
        OffsetDateTime base = OffsetDateTime.now(ZoneOffset.UTC).minusDays(1).withNano(0);
        List<String> statuses = List.of("sent", "failed", "sent", "reconciling", "sent", "failed", "sent");
        for (int i = 0; i < statuses.size(); i++) {
            // two transfers share each created_at from the third on: the id breaks the tie
            Rows.parkedAt(owner, statuses.get(i), base.plusMinutes(i < 2 ? i : 2 + (i - 2) / 2));
            Rows.parkedAt(other, "sent", base.plusMinutes(i).plusSeconds(30));
        }
        String created = Api.post(Api.writer(owner), Api.newKey(), Api.body(77)).then().statusCode(201).extract().path("id");
        List<String> expected = newestFirst(owner, null);
        assertEquals(8, expected.size());
        assertEquals(created, expected.get(0), "the transfer created last is listed first");

        List<List<String>> pages = pages(Api.writer(owner), Map.of("limit", 3));

        assertEquals(List.of(3, 3, 2), pages.stream().map(List::size).toList());
        List<String> listed = pages.stream().flatMap(List::stream).toList();
        assertEquals(expected, listed, "each of the owner's transfers exactly once, newest first");
        assertTrue(listed.stream().noneMatch(newestFirst(other, null)::contains), "nothing of another principal");
        // the other principal sees only theirs
        assertEquals(newestFirst(other, null), pages(Api.writer(other), Map.of("limit", 200)).get(0));
    }

    @Test
    void aTransferCreatedWhileTheCallerPagesNeitherRepeatsNorHidesAnOlderOne() {
        String owner = subject("pager");
        OffsetDateTime base = OffsetDateTime.now(ZoneOffset.UTC).minusHours(2).withNano(0);
        for (int i = 0; i < 5; i++) {
            Rows.parkedAt(owner, "sent", base.plusMinutes(i));
        }
        List<String> before = newestFirst(owner, null);
        String token = Api.writer(owner);
        JsonPath first = as(token).queryParam("limit", 2).get("/v1/me/transfers").then().statusCode(200).extract().jsonPath();

        Api.post(token, Api.newKey(), Api.body(5)).then().statusCode(201);

        List<String> seen = new ArrayList<>(first.getList("items.id"));
        String cursor = first.getString("nextCursor");
        while (cursor != null) {
            JsonPath page = as(token).queryParam("limit", 2).queryParam("after", cursor).get("/v1/me/transfers").then()
                    .statusCode(200).extract().jsonPath();
            seen.addAll(page.getList("items.id"));
            cursor = page.getString("nextCursor");
        }
        assertEquals(before, seen, "the pages of the listing as it was when paging began");
        assertEquals(seen.size(), new HashSet<>(seen).size());
    }

    @Test
    void theStatusFilterListsOnlyThatStatusNewestFirst() {
        String owner = subject("filter");
        OffsetDateTime base = OffsetDateTime.now(ZoneOffset.UTC).minusHours(3).withNano(0);
        List<String> statuses = List.of("failed", "sent", "failed", "sent", "failed", "reconciling", "failed");
        for (int i = 0; i < statuses.size(); i++) {
            Rows.parkedAt(owner, statuses.get(i), base.plusMinutes(i));
        }
        Rows.parkedAt(subject("filter-other"), "failed", base.plusMinutes(3).plusSeconds(1));

        List<List<String>> failed = pages(Api.writer(owner), Map.of("status", "failed", "limit", 2));

        assertEquals(newestFirst(owner, "failed"), failed.stream().flatMap(List::stream).toList());
        assertEquals(List.of(2, 2), failed.stream().map(List::size).toList());
        as(Api.writer(owner)).queryParam("status", "reconciling").get("/v1/me/transfers").then()
                .statusCode(200).body("items", hasSize(1)).body("items[0].status", equalTo("reconciling"))
                .body("nextCursor", nullValue());
    }

    @Test
    void invalidListingParametersAreA400NamingEach() {
        String token = Api.writer(subject("params"));
        as(token).queryParam("limit", 0).get("/v1/me/transfers").then().statusCode(400).contentType(PROBLEM)
                .body("errors.field", hasItem("limit"));
        as(token).queryParam("limit", 201).get("/v1/me/transfers").then().statusCode(400).body("errors.field", hasItem("limit"));
        as(token).queryParam("status", "lost").get("/v1/me/transfers").then().statusCode(400).body("errors.field", hasItem("status"));
        as(token).queryParam("after", "not-a-cursor").get("/v1/me/transfers").then().statusCode(400)
                .body("errors.field", hasItem("after"));
        assertNull(as(token).get("/v1/me/transfers").then().statusCode(200).extract().path("nextCursor"));
    }
}
