package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.problem.ProblemType;
import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Await;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.Rows;
import dev.ledgerline.transfers.support.Sandbox;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static dev.ledgerline.transfers.support.Api.as;
import static dev.ledgerline.transfers.support.Api.newKey;
import static dev.ledgerline.transfers.support.Api.writer;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Scheduled transfers ({@code executeAt}) and the owner's cancel, through HTTP: nothing is claimed or sent before
 * the scheduled instant, a cancelled transfer is never sent, and only a transfer nobody claimed can be cancelled.
 */
@QuarkusTest
class ScheduleAndCancelTest {

    private static final Duration DEADLINE = Duration.ofSeconds(20);

    static String scheduledBody(long amount, String executeAt) {
        return """
                {"amount": %d, "currency": "EUR", "destination": {"iban": "%s", "name": "Ada Lovelace"},
                 "description": "Rent December", "executeAt": %s}""".formatted(amount, Api.IBAN, executeAt);
    }

    static String at(Instant instant) {
        return "\"" + instant.truncatedTo(ChronoUnit.MILLIS) + "\"";
    }

    static Response cancel(String token, String id) {
        return as(token).post("/v1/transfers/" + id + "/cancel");
    }

    /** Lets time pass up to {@code instant}: what is asserted afterwards must hold however the pipeline used it. */
    static void waitUntil(Instant instant) {
        Awaitility.await("the clock reaches " + instant).atMost(DEADLINE).pollInterval(Duration.ofMillis(20))
                .until(() -> !Instant.now().isBefore(instant));
    }

    private static Instant instant(Response response, String path) {
        return OffsetDateTime.parse(response.path(path)).toInstant();
    }

    @Test
    void aScheduledTransferIsAcceptedAtOnceAndNothingIsSentBeforeItsTime() {
        String alice = writer("alice");
        Instant executeAt = Instant.now().plusSeconds(3).truncatedTo(ChronoUnit.MILLIS);
        Response created = Api.post(alice, newKey(), scheduledBody(3100, at(executeAt)));
        created.then().statusCode(201).body("status", equalTo("pending"));
        assertEquals(executeAt, instant(created, "executeAt"));
        String id = created.path("id");
        assertEquals(executeAt, instant(Api.get(alice, id).then().statusCode(200).extract().response(), "executeAt"));
        Map<String, Object> row = Db.query("SELECT execute_at, next_attempt_at FROM transfers WHERE id = ?::uuid", id).get(0);
        assertEquals(executeAt, ((Timestamp) row.get("execute_at")).toInstant());
        assertEquals(executeAt, ((Timestamp) row.get("next_attempt_at")).toInstant(), "the sweeper's due time is the schedule");

        // the accept dispatch ran already and the sweeper ticked at least once: both were refused by the claim
        waitUntil(executeAt.minusMillis(700));
        assertEquals("pending", Await.dbStatus(id), "nothing claimed before executeAt");
        assertEquals(List.of("pending"), Rows.history(id));
        assertEquals(0, Sandbox.executions(Rows.reference(id)), "nothing executed before executeAt");

        Await.status(id, "sent", DEADLINE);
        Sandbox.exactlyOneExecution(id);
        Timestamp claimedAt = (Timestamp) Db.query("SELECT at FROM transfer_events WHERE transfer_id = ?::uuid AND to_status = 'processing'",
                id).get(0).get("at");
        assertFalse(claimedAt.toInstant().isBefore(executeAt), "claimed at " + claimedAt.toInstant() + ", scheduled " + executeAt);
    }

    @Test
    void executeAtMustBeAFutureRfc3339InstantAtMost365DaysAhead() {
        String alice = writer("alice");
        Instant now = Instant.now();
        for (String invalid : List.of(at(now.minusSeconds(60)), at(now.plus(Duration.ofDays(366))), "\"tomorrow\"",
                "\"2031-01-31T09:00:00\"", "\"2031-01-31 09:00Z\"", "\"2031-02-30T09:00:00Z\"", "1924992000", "true")) {
            Api.post(alice, newKey(), scheduledBody(3200, invalid)).then()
                    .statusCode(400)
                    .contentType("application/problem+json")
                    .body("type", equalTo(ProblemType.VALIDATION_FAILED.uri()))
                    .body("errors.size()", equalTo(1))
                    .body("errors[0].field", equalTo("executeAt"));
        }
        String key = newKey();
        Api.post(alice, key, scheduledBody(3200, at(now.minusSeconds(60)))).then()
                .body("errors[0].message", equalTo("must be in the future; leave it out to send at once"));
        // the refused request left nothing behind under its key: no row, and no marker that would answer 409
        Api.post(alice, key, scheduledBody(3200, at(now.plus(Duration.ofHours(1))))).then().statusCode(201);
        cancel(alice, Db.query("SELECT id::text AS id FROM transfers WHERE idempotency_key = ?", key).get(0).get("id").toString())
                .then().statusCode(200);
        Api.post(alice, newKey(), scheduledBody(3200, at(now.plus(Duration.ofDays(366))))).then()
                .body("errors[0].message", equalTo("must be at most 365 days ahead"));

        // with an offset, a year less a day ahead, and null (at once)
        // formatted, not toString(): OffsetDateTime.toString() leaves the seconds out when they are :00, once a minute
        String far = "\"" + DateTimeFormatter.ISO_OFFSET_DATE_TIME.format(
                OffsetDateTime.now(ZoneOffset.ofHours(2)).plusDays(364).truncatedTo(ChronoUnit.SECONDS)) + "\"";
        String farId = Api.post(alice, newKey(), scheduledBody(3201, far)).then().statusCode(201).extract().path("id");
        cancel(alice, farId).then().statusCode(200);
        Api.post(alice, newKey(), scheduledBody(3202, "null")).then().statusCode(201).body("executeAt", nullValue());
    }

    @Test
    void executeAtIsPartOfTheRequestUnderItsIdempotencyKey() {
        String alice = writer("alice");
        String key = newKey();
        Instant executeAt = Instant.now().plus(Duration.ofHours(1)).truncatedTo(ChronoUnit.SECONDS);
        String id = Api.post(alice, key, scheduledBody(3300, at(executeAt))).then().statusCode(201).extract().path("id");

        Api.post(alice, key, scheduledBody(3300, at(executeAt.plusSeconds(1)))).then().statusCode(422)
                .body("type", equalTo(ProblemType.IDEMPOTENCY_KEY_REUSED.uri()));
        Api.post(alice, key, scheduledBody(3300, "null")).then().statusCode(422);
        // formatted with its seconds: OffsetDateTime.toString() leaves out ":00", which RFC 3339 does not allow
        String sameInstant = "\"" + DateTimeFormatter.ISO_OFFSET_DATE_TIME.format(executeAt.atOffset(ZoneOffset.ofHours(-5)))
                + "\"";
        Api.post(alice, key, scheduledBody(3300, sameInstant)).then().statusCode(201)
                .header("Idempotent-Replayed", "true").body("id", equalTo(id));
        cancel(alice, id).then().statusCode(200);
    }

    @Test
    void aTransferCancelledBeforeItsTimeIsNeverSentAndItsReplayAnswersTheCancel() {
        String alice = writer("alice");
        String key = newKey();
        Instant executeAt = Instant.now().plusSeconds(2);
        String body = scheduledBody(3400, at(executeAt));
        String id = Api.post(alice, key, body).then().statusCode(201).extract().path("id");

        cancel(alice, id).then()
                .statusCode(200)
                .header("ETag", "\"1\"")
                .body("id", equalTo(id))
                .body("status", equalTo("cancelled"))
                .body("version", equalTo(1));
        assertEquals(List.of("pending", "cancelled"), Rows.history(id));
        Map<String, Object> event = Db.query("SELECT from_status, actor, reason FROM transfer_events "
                + "WHERE transfer_id = ?::uuid AND version = 1", id).get(0);
        assertEquals("pending", event.get("from_status"));
        assertEquals("alice", event.get("actor"));
        assertEquals("cancelled by its owner", event.get("reason"));
        as(alice).get("/v1/transfers/" + id + "/events").then().statusCode(200)
                .body("events[1].toStatus", equalTo("cancelled"))
                .body("events[1].actor", equalTo("owner"));

        // past its time and more than a sweep later: still cancelled, never claimed, never executed
        waitUntil(executeAt.plusMillis(2500));
        assertEquals("cancelled", Await.dbStatus(id));
        assertEquals(List.of("pending", "cancelled"), Rows.history(id));
        assertEquals(0, Sandbox.executions(Rows.reference(id)));

        // a replay answers the cancelled transfer: from the database first, then from the final Redis entry
        for (int i = 0; i < 2; i++) {
            Api.post(alice, key, body).then().statusCode(201)
                    .header("Idempotent-Replayed", "true")
                    .body("id", equalTo(id))
                    .body("status", equalTo("cancelled"));
        }
        assertEquals(List.of("pending", "cancelled"), Rows.history(id));
    }

    @Test
    void cancellingACancelledTransferAnswersItAgainWithoutANewEvent() {
        String alice = writer("alice");
        String id = Api.post(alice, newKey(), scheduledBody(3500, at(Instant.now().plus(Duration.ofHours(1)))))
                .then().statusCode(201).extract().path("id");
        cancel(alice, id).then().statusCode(200).body("status", equalTo("cancelled")).body("version", equalTo(1));
        cancel(alice, id).then().statusCode(200).body("status", equalTo("cancelled")).body("version", equalTo(1));
        assertEquals(List.of("pending", "cancelled"), Rows.history(id));
    }

    @Test
    void aSentTransferIsNotCancellable() {
        String alice = writer("alice");
        String id = Api.create(alice, 3600);
        Await.status(id, "sent", DEADLINE);

        cancel(alice, id).then()
                .statusCode(409)
                .contentType("application/problem+json")
                .body("type", equalTo(ProblemType.TRANSFER_NOT_CANCELLABLE.uri()))
                .body("status", equalTo(409))
                .body("transferStatus", equalTo("sent"));
        assertEquals("sent", Await.dbStatus(id));
        assertEquals(List.of("pending", "processing", "sent"), Rows.history(id));
        Sandbox.exactlyOneExecution(id);
    }

    @Test
    void onlyTheOwnerCancelsAndOnlyWithTheWriteGroup() {
        String alice = writer("alice");
        String id = Api.post(alice, newKey(), scheduledBody(3700, at(Instant.now().plus(Duration.ofHours(1)))))
                .then().statusCode(201).extract().path("id");

        cancel(writer("mallory"), id).then().statusCode(404).body("type", equalTo(ProblemType.NOT_FOUND.uri()));
        cancel(Api.token("alice", List.of("transfers.read")), id).then().statusCode(403)
                .body("type", equalTo(ProblemType.FORBIDDEN.uri()));
        cancel(Api.token("ops", List.of("transfers.read.all")), id).then().statusCode(403);
        given().post("/v1/transfers/" + id + "/cancel").then().statusCode(401);
        cancel(alice, "not-a-uuid").then().statusCode(404);
        cancel(alice, UUID.randomUUID().toString()).then().statusCode(404);
        assertEquals("pending", Await.dbStatus(id), "nobody but its owner cancelled it");
        assertEquals(List.of("pending"), Rows.history(id));
        cancel(alice, id).then().statusCode(200).body("status", equalTo("cancelled"));
    }

    /**
     * A new database server (restart, failover, restore) sends open transfers to a lookup first. A transfer scheduled
     * beyond the settle time cannot have been claimed on any server, so it stays pending at its version and can still
     * be cancelled; while the server is not adopted the cancel, like the claim, waits (503).
     */
    @Test
    void aScheduledTransferStaysPendingAndCancellableThroughTheAdoptionOfANewDatabaseServer() {
        String alice = writer("alice");
        String id = Api.post(alice, newKey(), scheduledBody(3900, at(Instant.now().plus(Duration.ofHours(1)))))
                .then().statusCode(201).extract().path("id");
        Db.update("DELETE FROM database_epochs");
        Response early;
        try {
            early = cancel(alice, id);
        } finally {
            Awaitility.await("the sweeper adopts the server").atMost(DEADLINE).pollInterval(Duration.ofMillis(100))
                    .until(() -> Db.count("SELECT count(*) FROM database_epochs") > 0);
        }
        if (early.statusCode() == 503) {
            early.then().header("Retry-After", "2").body("type", equalTo(ProblemType.SERVICE_UNAVAILABLE.uri()));
            assertEquals(List.of("pending"), Rows.history(id), "not moved to a lookup by the adoption");
            cancel(alice, id).then().statusCode(200).body("status", equalTo("cancelled"));
        } else {
            // the sweeper adopted the server (within its 1 s tick) before the cancel came: the cancel found it pending
            early.then().statusCode(200).body("status", equalTo("cancelled"));
        }
        assertEquals(List.of("pending", "cancelled"), Rows.history(id), "never moved to a lookup by the adoption");
    }

    @Test
    void theDatabaseRefusesAnyChangeAfterCancelledAndACancelOfAClaimedTransfer() {
        String alice = writer("alice");
        String id = Api.post(alice, newKey(), scheduledBody(3800, at(Instant.now().plus(Duration.ofHours(1)))))
                .then().statusCode(201).extract().path("id");
        RuntimeException reschedule = assertThrows(RuntimeException.class, () -> Db.update(
                "UPDATE transfers SET execute_at = now() WHERE id = ?::uuid", id));
        assertTrue(String.valueOf(reschedule.getCause()).contains("execute_at"), reschedule.toString());
        cancel(alice, id).then().statusCode(200);

        RuntimeException reopened = assertThrows(RuntimeException.class, () -> Db.update(
                "UPDATE transfers SET status = 'processing', version = version + 1, feed_xid = greatest(feed_xid, pg_current_xact_id()), last_actor = 'test' WHERE id = ?::uuid", id));
        assertTrue(String.valueOf(reopened.getCause()).contains("cannot change"), reopened.toString());

        String claimed = Api.post(alice, newKey(), scheduledBody(3802, at(Instant.now().plus(Duration.ofHours(1)))))
                .then().statusCode(201).extract().path("id");
        Db.update("UPDATE transfers SET previous_status = status, status = 'processing', version = version + 1, feed_xid = greatest(feed_xid, pg_current_xact_id()), last_actor = 'test' "
                + "WHERE id = ?::uuid", claimed);
        RuntimeException afterClaim = assertThrows(RuntimeException.class, () -> Db.update(
                "UPDATE transfers SET status = 'cancelled', version = version + 1, feed_xid = greatest(feed_xid, pg_current_xact_id()), last_actor = 'test' WHERE id = ?::uuid", claimed));
        assertTrue(String.valueOf(afterClaim.getCause()).contains("cannot be cancelled"), afterClaim.toString());
        cancel(alice, claimed).then().statusCode(409).body("transferStatus", equalTo("processing"));

        String sent = Api.create(alice, 3801);
        Await.status(sent, "sent", DEADLINE);
        RuntimeException late = assertThrows(RuntimeException.class, () -> Db.update(
                "UPDATE transfers SET status = 'cancelled', version = version + 1, feed_xid = greatest(feed_xid, pg_current_xact_id()), last_actor = 'test' WHERE id = ?::uuid", sent));
        assertTrue(String.valueOf(late.getCause()).contains("cannot be cancelled"), late.toString());
        assertEquals("cancelled", Await.dbStatus(id));
        assertEquals("sent", Await.dbStatus(sent));
    }
}
