package dev.ledgerline.transfers.pipeline;

import dev.ledgerline.transfers.problem.ProblemType;
import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Await;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.Rows;
import dev.ledgerline.transfers.support.Sandbox;
import dev.ledgerline.transfers.transfer.Seen;
import dev.ledgerline.transfers.transfer.TransferStatus;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static dev.ledgerline.transfers.support.Api.as;
import static dev.ledgerline.transfers.support.Api.newKey;
import static dev.ledgerline.transfers.support.Api.writer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The owner's cancel and the pipeline's claim race for the same pending row, and exactly one wins: 40 transfers are
 * scheduled for one instant, and at that instant each is cancelled over HTTP while workers claim it — this test's
 * own calls of {@link TransferProcessor#process} from several threads, besides the sweeper, which takes the rows as
 * they become due. Each transfer ends {@code cancelled} with no execution at the provider, or {@code sent} with
 * exactly one, never both, and the cancel's answer says which. A round in which one side won every race raced
 * nothing; the test races again, up to three rounds in all, until each side has won at least once.
 */
@QuarkusTest
class CancelRaceTest {

    private static final int TRANSFERS = 40;
    /** Rounds at the most until the race has been won by both sides at least once. */
    private static final int ROUNDS = 3;

    @Inject
    TransferProcessor processor;

    private static String body(long amount, Instant executeAt) {
        return """
                {"amount": %d, "currency": "EUR", "destination": {"iban": "%s", "name": "Ada Lovelace"}, "executeAt": "%s"}"""
                .formatted(amount, Api.IBAN, executeAt);
    }

    /** A start time for one move of the race (not a wait for a result: what follows asserts nothing about time). */
    private static void parkUntil(long nanoTime) {
        for (long left = nanoTime - System.nanoTime(); left > 0; left = nanoTime - System.nanoTime()) {
            LockSupport.parkNanos(left);
        }
    }

    @Test
    void aCancelAndAClaimRacingForATransferNeverBothWin() throws Exception {
        String alice = writer("alice");
        long duplicatesBefore = Sandbox.duplicateExecutions(); // other tests of the run may have made some on purpose
        // warm-up: the first send of a fresh JVM builds the provider's client
        String warm = Api.create(alice, 4000);
        Await.status(warm, "sent", Duration.ofSeconds(20));

        // what a cancel over HTTP takes from its start to its answer, on this machine now
        List<Long> latencies = new ArrayList<>();
        List<Long> creations = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            long posted = System.nanoTime();
            String id = Api.post(alice, newKey(), body(4050 + i, Instant.now().plusSeconds(3600))).then().statusCode(201).extract().path("id");
            creations.add(System.nanoTime() - posted);
            long began = System.nanoTime();
            as(alice).post("/v1/transfers/" + id + "/cancel").then().statusCode(200);
            latencies.add(System.nanoTime() - began);
        }
        Collections.sort(latencies);
        long cancelNanos = latencies.get(latencies.size() / 2);

        // a round whose cancels all arrive before or after every claim raced nothing: on a loaded machine (a stalled
        // event loop) one can miss, so up to three rounds race, each checked in full, until both sides have won
        int cancelledTotal = 0;
        int sentTotal = 0;
        for (int round = 0; round < ROUNDS && (cancelledTotal == 0 || sentTotal == 0); round++) {
            int[] won = race(alice, round, cancelNanos, creations);
            cancelledTotal += won[0];
            sentTotal += won[1];
        }
        assertEquals(duplicatesBefore, Sandbox.duplicateExecutions(), "no reference executed twice");
        assertTrue(cancelledTotal > 0 && sentTotal > 0, "both sides won some races in " + ROUNDS + " rounds (cancelled "
                + cancelledTotal + ", sent " + sentTotal + ")");
    }

    /** One round: {@link #TRANSFERS} transfers due at one instant, each cancelled and claimed at it; {cancelled, sent}. */
    private int[] race(String alice, int round, long cancelNanos, List<Long> creations) throws Exception {
        // the instant: 6 s ahead, or later where creating the transfers takes longer (a loaded machine)
        Collections.sort(creations);
        Duration creating = Duration.ofNanos(creations.get(creations.size() / 2) * TRANSFERS * 3).plusSeconds(2);
        Instant executeAt = Instant.now().plus(creating.compareTo(Duration.ofSeconds(6)) > 0 ? creating : Duration.ofSeconds(6))
                .truncatedTo(ChronoUnit.MILLIS);
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < TRANSFERS; i++) {
            ids.add(Api.post(alice, newKey(), body(4100 + round * TRANSFERS + i, executeAt)).then().statusCode(201).extract().path("id"));
        }
        assertTrue(Instant.now().isBefore(executeAt.minusMillis(500)), "all created before their time, or the race is not one");

        // at the instant, 8 threads cancel the transfers, while workers claim them: the sweeper, whose tick takes the
        // rows as they become due, and this test's own claim of each transfer. That claim is started by the cancel's
        // thread as the cancel leaves, 0 to 2 cancel latencies later (a cancel queued behind others is slower than
        // the latency measured alone): the cancel's UPDATE and the claim reach PostgreSQL at about the same time
        long t0 = System.nanoTime() + Duration.between(Instant.now(), executeAt).toNanos();
        Map<String, Response> cancels = new ConcurrentHashMap<>();
        List<CompletableFuture<TransferProcessor.Outcome>> passes = Collections.synchronizedList(new ArrayList<>());
        ExecutorService cancellers = Executors.newFixedThreadPool(8);
        ScheduledExecutorService claimers = Executors.newScheduledThreadPool(2);
        List<Future<?>> cancelled = new ArrayList<>();
        try {
            for (int i = 0; i < ids.size(); i++) {
                String id = ids.get(i);
                long claimAfter = (i % 5) * cancelNanos / 2;
                // a quarter of the cancels leave at the instant, the others up to 1.5 cancel latencies before it, so
                // that on a loaded machine, where a cancel takes longer than measured, some still meet the claims
                long lead = (i % 4) * cancelNanos / 2;
                cancelled.add(cancellers.submit(() -> {
                    parkUntil(t0 - lead);
                    claimers.schedule(() -> passes.add(processor.process(new Seen(UUID.fromString(id), TransferStatus.PENDING, 0),
                            "race: claim at executeAt").subscribeAsCompletionStage()), claimAfter, TimeUnit.NANOSECONDS);
                    cancels.put(id, as(alice).post("/v1/transfers/" + id + "/cancel"));
                }));
            }
            // each cancel first parks until the instant, which on a loaded machine is well beyond 30 s away
            long deadline = Math.max(t0, System.nanoTime()) + TimeUnit.SECONDS.toNanos(30);
            for (Future<?> f : cancelled) {
                f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            }
            claimers.shutdown();
            assertTrue(claimers.awaitTermination(30, TimeUnit.SECONDS), "every claim started");
        } finally {
            cancellers.shutdownNow();
            claimers.shutdownNow();
        }
        for (CompletableFuture<TransferProcessor.Outcome> pass : passes) {
            pass.get(30, TimeUnit.SECONDS);
        }
        assertEquals(TRANSFERS, cancels.size(), "every cancel answered");

        Awaitility.await("every transfer is cancelled or sent").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                .until(() -> Db.count("SELECT count(*) FROM transfers WHERE id = ANY(?::uuid[]) AND status IN ('cancelled', 'sent')",
                        (Object) ids.toArray(String[]::new)) == TRANSFERS);

        int cancelledCount = 0;
        int sent = 0;
        for (String id : ids) {
            String status = (String) Db.query("SELECT status FROM transfers WHERE id = ?::uuid", id).get(0).get("status");
            int executions = Sandbox.executions(Rows.reference(id));
            Response answer = cancels.get(id);
            if (status.equals("cancelled")) {
                cancelledCount++;
                assertEquals(0, executions, "a cancelled transfer has no execution: " + id);
                assertEquals(List.of("pending", "cancelled"), Rows.history(id), "never claimed: " + id);
                assertEquals(200, answer.statusCode(), "the cancel that won answered 200: " + id);
            } else {
                sent++;
                Sandbox.exactlyOneExecution(id);
                List<String> history = Rows.history(id);
                assertTrue(history.get(1).equals("processing") && !history.contains("cancelled"), "claimed, never cancelled: " + history);
                assertEquals(409, answer.statusCode(), "the cancel that lost answered 409: " + id);
                assertEquals(ProblemType.TRANSFER_NOT_CANCELLABLE.uri(), answer.path("type"));
            }
        }
        System.out.printf("cancel race, round %d: %d cancelled, %d sent of %d; claims by %s%n", round + 1, cancelledCount, sent, TRANSFERS,
                Db.query("SELECT reason, count(*) AS n, min(at - e0.at0) AS first, max(at - e0.at0) AS last FROM transfer_events, "
                        + "(SELECT ?::timestamptz AS at0) e0 WHERE transfer_id = ANY(?::uuid[]) AND version = 1 GROUP BY reason",
                        executeAt.toString(), ids.toArray(String[]::new)) + ", cancel latency " + cancelNanos / 1_000_000 + " ms");
        return new int[] {cancelledCount, sent};
    }
}
