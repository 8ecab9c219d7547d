package dev.ledgerline.transfers.api;

import dev.ledgerline.devstack.LocalPostgres;
import dev.ledgerline.transfers.problem.ProblemType;
import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Await;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.TestStack;
import io.quarkus.test.junit.QuarkusTest;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static dev.ledgerline.transfers.support.Api.body;
import static dev.ledgerline.transfers.support.Api.newKey;
import static dev.ledgerline.transfers.support.Api.writer;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.lessThan;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** Without PostgreSQL nothing is accepted: 503 + Retry-After, and a 201 only ever follows a committed row. */
@QuarkusTest
class DatabaseOutageTest {

    @AfterEach
    void databaseBack() throws Exception {
        TestStack.current().postgres().startAgain();
    }

    @Test
    void writesAnswer503WhileTheDatabaseIsDownAndTheSameKeySucceedsAfterwards() throws Exception {
        String token = writer("dbdown");
        Api.create(token, 10); // warm connections before taking the database away
        String key = newKey();
        LocalPostgres pg = TestStack.current().postgres();
        pg.stop();

        Api.post(token, key, body(777)).then()
                .statusCode(503)
                .header("Retry-After", "2")
                .contentType("application/problem+json")
                .body("type", equalTo(ProblemType.SERVICE_UNAVAILABLE.uri()))
                .time(lessThan(7000L));
        Api.get(token, java.util.UUID.randomUUID().toString()).then().statusCode(503);

        pg.startAgain();
        Awaitility.await("the same key is accepted once the database is back").atMost(Duration.ofSeconds(20))
                .pollInterval(Duration.ofMillis(250))
                .until(() -> Api.post(token, key, body(777)).statusCode() == 201);
        assertEquals(1, Db.count("SELECT count(*) FROM transfers WHERE user_id = 'dbdown' AND idempotency_key = ?", key));

        // and the pipeline recovers by itself: the transfer accepted after the outage is sent. (Requests that queued
        // for a connection during the outage can hold pool waiters for up to the pool's 30 s connection timeout;
        // later tests must not start inside that window.)
        String id = Api.post(token, key, body(777)).then().statusCode(201).extract().path("id");
        Await.status(id, "sent", Duration.ofSeconds(45));
    }
}
