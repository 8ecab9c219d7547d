package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Rows;
import dev.ledgerline.transfers.support.Sandbox;
import dev.ledgerline.transfers.support.SideSettings;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static dev.ledgerline.transfers.support.Api.as;
import static dev.ledgerline.transfers.support.Api.writer;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.not;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A long poll is held for the whole {@code Prefer: wait} the contract allows (30 s), on GET and POST, under
 * the production timeouts: the 10 s body deadline, the 10 s blocking read timeout and the 45 s idle timeout.
 * The test profile shortens the body deadline for the other tests; this one puts the production values back,
 * since a held request without a body once fell to the body deadline at 10 s.
 */
@QuarkusTest
@TestProfile(SideSettings.class)
class LongPollProdTimeoutsTest {

    @AfterEach
    void providerBack() {
        Sandbox.reset();
    }

    @Test
    void getAndPostAreHeldForTheFullThirtySecondsTheContractAllows() throws Exception {
        String token = writer("patient-poller");
        String parked = Rows.parkedPending("patient-poller");
        // the provider fails every send and every lookup: the POSTed transfer stays open for the whole wait
        Sandbox.faults(Map.of("errorBeforeExecuteRate", 1.0, "lookupErrorRate", 1.0));

        // one thread each: the common pool may have a single thread on a small machine, which would serialise them
        ExecutorService clients = Executors.newFixedThreadPool(2);
        CompletableFuture<Timed> get = CompletableFuture.supplyAsync(() -> Timed.of(() ->
                as(token).header("Prefer", "wait=30").header("If-None-Match", "\"0\"").get("/v1/transfers/" + parked)), clients);
        CompletableFuture<Timed> post = CompletableFuture.supplyAsync(() -> Timed.of(() ->
                as(token).contentType("application/json").header("Idempotency-Key", Api.newKey())
                        .header("Prefer", "wait=30").body(Api.body(777)).post("/v1/transfers")), clients);
        clients.shutdown();

        Timed held = get.get(60, TimeUnit.SECONDS);
        held.response().then().statusCode(304).header("Preference-Applied", "wait=30").header("ETag", "\"0\"");
        assertTrue(held.ms() >= 29_500 && held.ms() < 44_000, "GET answered after " + held.ms() + " ms, asked to wait 30 s");

        Timed created = post.get(60, TimeUnit.SECONDS);
        created.response().then().statusCode(201).header("Preference-Applied", "wait=30")
                .body("status", not(equalTo("sent"))).body("status", not(equalTo("failed")));
        assertTrue(created.ms() >= 29_500 && created.ms() < 44_000, "POST answered after " + created.ms() + " ms, asked to wait 30 s");
    }

    /** An answer and how long it took, from sending the request (the upper bound stays under the 45 s idle timeout). */
    record Timed(Response response, long ms) {
        static Timed of(java.util.function.Supplier<Response> call) {
            long start = System.nanoTime();
            Response response = call.get();
            return new Timed(response, (System.nanoTime() - start) / 1_000_000);
        }
    }
}
