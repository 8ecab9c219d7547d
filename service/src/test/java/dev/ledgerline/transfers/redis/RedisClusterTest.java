package dev.ledgerline.transfers.redis;

import dev.ledgerline.transfers.idempotency.InFlightMarker;
import dev.ledgerline.transfers.pipeline.RedisLock;
import dev.ledgerline.transfers.problem.ProblemType;
import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Await;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.LocalRedisCluster;
import dev.ledgerline.transfers.support.Metrics;
import dev.ledgerline.transfers.support.Rows;
import dev.ledgerline.transfers.support.Sandbox;
import dev.ledgerline.transfers.support.Statements;
import dev.ledgerline.transfers.support.TestStack;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.params.SetParams;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.ledgerline.transfers.support.Api.body;
import static dev.ledgerline.transfers.support.Api.newKey;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The service on a real Redis Cluster ({@code quarkus.redis.client-type=cluster}; three masters with a
 * replica each, see {@link LocalRedisCluster}): every Redis-backed path works there — each script touches
 * one key, so one slot — and a master failing over loses nothing: no duplicate execution, every accepted
 * transfer final, and the fast path back by itself.
 */
@QuarkusTest
@TestProfile(RedisClusterTest.OnACluster.class)
class RedisClusterTest {

    /** Points the service at the cluster; writes get a bucket of 20 refilled once per 100 s, so the limiter test can empty one. */
    public static class OnACluster implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "quarkus.redis.client-type", "cluster",
                    "quarkus.redis.hosts", LocalRedisCluster.shared().hosts(),
                    "ledgerline.rate-limit.writes.per-second", "0.01",
                    "ledgerline.rate-limit.writes.burst", "20");
        }
    }

    private static final Duration WAIT = Duration.ofSeconds(5);
    private static final Duration SETTLE = Duration.ofSeconds(60);

    @Inject
    RedisLock lock;

    @Inject
    RedisCommands redis;

    @AfterEach
    void healthy() {
        Sandbox.reset();
        LocalRedisCluster.shared().awaitHealthy();
        TestStack.closeBreakers();
    }

    @AfterAll
    static void stopCluster() {
        LocalRedisCluster.shared().stop();
    }

    @Test
    void replay422And409AreAnsweredFromTheCluster() {
        String principal = principal();
        String token = Api.writer(principal);
        String key = newKey();
        String id = Api.post(token, key, body(401)).then().statusCode(201).extract().path("id");
        Await.status(id, "sent", SETTLE);

        try (JedisCluster cluster = LocalRedisCluster.shared().client()) {
            assertNotNull(cluster.get(InFlightMarker.redisKey(principal, key)), "the completed key is kept in the cluster");

            Api.post(token, key, body(401)).then().statusCode(201).header("Idempotent-Replayed", "true").body("id", equalTo(id));
            long statements = Statements.postPath();
            for (int i = 0; i < 3; i++) {
                Api.post(token, key, body(401)).then().statusCode(201).header("Idempotent-Replayed", "true")
                        .body("id", equalTo(id)).body("status", equalTo("sent"));
            }
            Api.post(token, key, body(402)).then().statusCode(422)
                    .body("type", equalTo(ProblemType.IDEMPOTENCY_KEY_REUSED.uri()));
            // each replay of the sent transfer reads at most its row by id (none when the adopted server made it final,
            // AdoptedServer); the 422 reads nothing
            long reads = Statements.postPath() - statements;
            assertTrue(reads <= 3, "replays of a sent transfer and the 422 are answered from the cluster: " + reads + " reads");

            // a first request with this key still running, as its in-flight marker says
            String busy = newKey();
            cluster.set(InFlightMarker.redisKey(principal, busy), InFlightMarker.value(), SetParams.setParams().px(60_000));
            Api.post(token, busy, body(403)).then().statusCode(409)
                    .header("Retry-After", org.hamcrest.Matchers.notNullValue())
                    .body("type", equalTo(ProblemType.IDEMPOTENCY_KEY_IN_USE.uri()));
            assertEquals(0, Db.count("SELECT count(*) FROM transfers WHERE idempotency_key = ?", busy));
        }
    }

    @Test
    void theLockIsTakenOnceAndReleasedOnlyByItsHolder() {
        String key = RedisLock.key(UUID.randomUUID());
        String holder = RedisLock.newToken();
        String other = RedisLock.newToken();
        assertTrue(lock.acquire(key, holder, Duration.ofSeconds(30)).await().atMost(WAIT));
        assertFalse(lock.acquire(key, other, Duration.ofSeconds(30)).await().atMost(WAIT), "held: a second worker stays out");
        try (JedisCluster cluster = LocalRedisCluster.shared().client()) {
            assertEquals(holder, cluster.get(key), "the holder's token is on the master of the key's slot");
            assertTrue(cluster.pttl(key) > 0, "the lock expires on its own");
            assertFalse(lock.release(key, other).await().atMost(WAIT), "another token never deletes it");
            assertEquals(holder, cluster.get(key));
            assertTrue(lock.release(key, holder).await().atMost(WAIT));
            assertEquals(null, cluster.get(key));
        }
        assertTrue(lock.acquire(key, other, Duration.ofSeconds(30)).await().atMost(WAIT), "free again once released");
        assertTrue(lock.release(key, other).await().atMost(WAIT));
    }

    @Test
    void theRateLimiterKeepsOneBucketPerPrincipalInTheCluster() {
        String token = Api.writer(principal());
        double limitedInRedis = counted(Metrics.scrape(), "ledgerline_rate_limit_total", "store=\"redis\"", "result=\"limited\"");
        for (int i = 0; i < 20; i++) {
            Api.post(token, newKey(), body(500 + i)).then().statusCode(201);
        }
        Api.post(token, newKey(), body(600)).then().statusCode(429)
                .header("Retry-After", org.hamcrest.Matchers.notNullValue())
                .body("type", equalTo(ProblemType.RATE_LIMITED.uri()));
        assertEquals(limitedInRedis + 1, counted(Metrics.scrape(), "ledgerline_rate_limit_total", "store=\"redis\"", "result=\"limited\""),
                "refused by the bucket in the cluster, not by this instance's fallback");
    }

    @Test
    void aPipelineBurstExecutesEveryTransferExactlyOnce() throws Exception {
        Sandbox.faults(Map.of("idempotent", false));
        long duplicatesBefore = Sandbox.duplicateExecutions();
        List<String> tokens = new ArrayList<>();
        for (int p = 0; p < 20; p++) {
            tokens.add(Api.writer(principal()));
        }
        List<String> ids = Collections.synchronizedList(new ArrayList<>());
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<Integer>> answers = new ArrayList<>();
            for (int i = 0; i < 60; i++) {
                String token = tokens.get(i % tokens.size());
                long amount = 700 + i;
                answers.add(pool.submit(() -> {
                    Response r = Api.post(token, newKey(), body(amount));
                    if (r.statusCode() == 201) {
                        ids.add(r.path("id"));
                    }
                    return r.statusCode();
                }));
            }
            for (Future<Integer> answer : answers) {
                assertEquals(201, answer.get(60, TimeUnit.SECONDS));
            }
        } finally {
            pool.shutdownNow();
        }
        Await.allTerminal(ids, SETTLE);
        for (String id : ids) {
            assertEquals("sent", Await.dbStatus(id));
            assertEquals(1, Sandbox.executions(Rows.reference(id)), "exactlyOneExecutionPerReference: " + id);
        }
        assertEquals(duplicatesBefore, Sandbox.duplicateExecutions());
    }

    /**
     * Load before, during and after {@code CLUSTER FAILOVER} of the master holding one of the keys: two
     * clients keep sending new transfers and replays while the replica takes over, and for 20 requests after.
     * The figures (requests, accepted, duplicates, fast-path hit rate of replays before, during and after)
     * are printed for bench/REDIS-CLUSTER.md; the invariants are asserted.
     */
    @Test
    void aMasterFailingOverLosesNoTransferAndTheFastPathComesBack() throws Exception {
        Sandbox.faults(Map.of("idempotent", false));
        long duplicatesBefore = Sandbox.duplicateExecutions();
        LocalRedisCluster cluster = LocalRedisCluster.shared();
        Load load = new Load();

        load.newTransfers(40);
        load.replayAll();
        double before = load.fastPathRate();

        String someKey = InFlightMarker.redisKey(load.accepted.get(0).principal, load.accepted.get(0).key);
        int master = cluster.masterFor(someKey);
        int replica = cluster.replicaOf(master);
        int requestsBeforeFailover = load.requests.get();
        underLoad(load, () -> cluster.failOver(replica));
        int requestsDuring = load.requests.get() - requestsBeforeFailover;
        double duringRate = load.fastPathRate();
        assertEquals(replica, cluster.masterFor(someKey), "the replica serves the key's slot now");

        // by itself: no breaker reset here, only the service's own trial calls
        Awaitility.await("the shared Redis breaker closes again").atMost(SETTLE).pollInterval(Duration.ofMillis(200))
                .until(redis::breakerClosed);
        load.newTransfers(20);
        load.resetFastPathCount();
        load.replayAll();
        double after = load.fastPathRate();

        long duplicates = settledOnce(load.accepted, duplicatesBefore);
        System.out.printf("RedisClusterTest failover: master :%d -> replica :%d; requests=%d (new %d, replays %d, 409 in use %d; %d while failing over), "
                        + "accepted=%d, other answers=%s, sent=%d, duplicate executions=%d, "
                        + "fast-path hit rate of replays before=%.1f%% during=%.1f%% after=%.1f%%%n",
                master, replica, load.requests.get(), load.newRequests.get(), load.replays.get(), load.inUse.get(), requestsDuring,
                load.accepted.size(), load.otherAnswers, load.accepted.size(), duplicates, before * 100, duringRate * 100, after * 100);
        assertEquals(List.of(), load.otherAnswers, "every new transfer was accepted, failover or not");
        assertEquals(0, duplicates, "no reference executed twice");
        assertTrue(before >= 0.9, "the fast path answered the replays before the failover: " + before);
        assertTrue(after >= 0.9, "and answers them again after it: " + after);
    }

    /**
     * A master killed (SIGKILL) under load instead: the cluster promotes its replica by itself after the node
     * timeout, and what the master had not passed on is lost. The service answers from PostgreSQL meanwhile;
     * afterwards nothing is duplicated, everything accepted is final, and new keys are on the fast path again.
     */
    @Test
    void aKilledMasterLosesNoTransferEither() throws Exception {
        Sandbox.faults(Map.of("idempotent", false));
        long duplicatesBefore = Sandbox.duplicateExecutions();
        LocalRedisCluster cluster = LocalRedisCluster.shared();
        Load load = new Load();

        load.newTransfers(30);
        load.replayAll();
        double before = load.fastPathRate();

        String someKey = InFlightMarker.redisKey(load.accepted.get(0).principal, load.accepted.get(0).key);
        int master = cluster.masterFor(someKey);
        int replica = cluster.replicaOf(master);
        int requestsBeforeKill = load.requests.get();
        underLoad(load, () -> cluster.killAndRejoin(master));
        int requestsDuring = load.requests.get() - requestsBeforeKill;
        double duringRate = load.fastPathRate();
        assertEquals(replica, cluster.masterFor(someKey), "the replica serves the key's slot now");

        // the breaker only tries Redis again when a request comes: replays keep coming until one trial succeeds
        Awaitility.await("the shared Redis breaker closes again under traffic").atMost(SETTLE).pollInterval(Duration.ofMillis(200))
                .until(() -> {
                    load.replayLatest();
                    return redis.breakerClosed();
                });
        load.resetFastPathCount();
        for (Accepted a : List.copyOf(load.accepted)) {
            load.replayOrInUse(a);
        }
        double allKeys = load.fastPathRate();
        Load fresh = new Load();
        fresh.newTransfers(20);
        fresh.resetFastPathCount();
        fresh.replayAll();
        double after = fresh.fastPathRate();

        List<Accepted> all = new ArrayList<>(load.accepted);
        all.addAll(fresh.accepted);
        long duplicates = settledOnce(all, duplicatesBefore);
        System.out.printf("RedisClusterTest kill: master :%d killed -> replica :%d; requests=%d (new %d, replays %d, 409 in use %d; "
                        + "%d while the master was down), accepted=%d, other answers=%s, duplicate executions=%d, fast-path hit rate "
                        + "of replays before=%.1f%% during=%.1f%% after for every key=%.1f%% after for new keys=%.1f%%%n",
                master, replica, load.requests.get() + fresh.requests.get(), load.newRequests.get() + fresh.newRequests.get(),
                load.replays.get() + fresh.replays.get(), load.inUse.get(), requestsDuring, all.size(), load.otherAnswers,
                duplicates, before * 100, duringRate * 100, allKeys * 100, after * 100);
        assertEquals(List.of(), load.otherAnswers, "every new transfer was accepted, master or not");
        assertEquals(0, duplicates, "no reference executed twice");
        assertTrue(after >= 0.9, "new keys are answered on the fast path again: " + after);
    }

    /** Two clients send new transfers and replay them while {@code fault} runs, and go on for 20 requests after it. */
    private static void underLoad(Load load, Runnable fault) throws Exception {
        AtomicBoolean loading = new AtomicBoolean(true);
        ExecutorService clients = Executors.newFixedThreadPool(2);
        List<Future<?>> running = new ArrayList<>();
        try {
            for (int c = 0; c < 2; c++) {
                running.add(clients.submit(() -> {
                    while (loading.get()) {
                        load.newTransfers(1);
                        load.replayLatest();
                    }
                    return null;
                }));
            }
            fault.run();
            int atEnd = load.requests.get();
            Awaitility.await("20 more requests after the fault").atMost(SETTLE).pollInterval(Duration.ofMillis(50))
                    .until(() -> load.requests.get() >= atEnd + 20);
            loading.set(false);
            for (Future<?> client : running) {
                client.get(60, TimeUnit.SECONDS);
            }
        } finally {
            loading.set(false);
            clients.shutdownNow();
        }
    }

    /** Every accepted transfer sent, once, one row per key; answers the provider's new duplicate executions. */
    private static long settledOnce(List<Accepted> accepted, long duplicatesBefore) {
        Await.allTerminal(accepted.stream().map(a -> a.id).toList(), SETTLE);
        for (Accepted a : accepted) {
            assertEquals("sent", Await.dbStatus(a.id), "every accepted transfer is final (and the provider was healthy)");
            assertEquals(1, Sandbox.executions(Rows.reference(a.id)), "exactlyOneExecutionPerReference: " + a.id);
            assertEquals(1, Db.count("SELECT count(*) FROM transfers WHERE user_id = ? AND idempotency_key = ?", a.principal, a.key));
        }
        return Sandbox.duplicateExecutions() - duplicatesBefore;
    }

    private record Accepted(String principal, String key, String token, long amount, String id) {
    }

    /** The client side of the failover scenario: what was sent and what was accepted. */
    private static final class Load {
        final List<Accepted> accepted = Collections.synchronizedList(new ArrayList<>());
        final List<Integer> otherAnswers = Collections.synchronizedList(new ArrayList<>());
        final AtomicInteger requests = new AtomicInteger();
        final AtomicInteger newRequests = new AtomicInteger();
        final AtomicInteger replays = new AtomicInteger();
        final AtomicInteger replaysThisRound = new AtomicInteger();
        final AtomicInteger inUse = new AtomicInteger();
        volatile double fastPathAtStart = fastPath();

        void newTransfers(int n) {
            for (int i = 0; i < n; i++) {
                String principal = principal();
                String token = Api.writer(principal);
                String key = newKey();
                long amount = 1000 + newRequests.incrementAndGet();
                Response r = Api.post(token, key, body(amount));
                requests.incrementAndGet();
                if (r.statusCode() == 201) {
                    accepted.add(new Accepted(principal, key, token, amount, r.path("id")));
                } else {
                    otherAnswers.add(r.statusCode());
                }
            }
        }

        void replayAll() {
            for (Accepted a : List.copyOf(accepted)) {
                replay(a);
            }
        }

        /**
         * While the master fails over, the entry that replaces a request's in-flight marker may not have
         * been written; until the marker's TTL passes a replay is then told 409 "in use", the documented answer.
         */
        void replayLatest() {
            replayOrInUse(accepted.get(accepted.size() - 1));
        }

        void replayOrInUse(Accepted a) {
            Response r = Api.post(a.token, a.key, body(a.amount));
            if (r.statusCode() == 409) {
                inUse.incrementAndGet();
                requests.incrementAndGet();
                return;
            }
            r.then().statusCode(201).header("Idempotent-Replayed", "true").body("id", equalTo(a.id));
            requests.incrementAndGet();
            replays.incrementAndGet();
            replaysThisRound.incrementAndGet();
        }

        private void replay(Accepted a) {
            Api.post(a.token, a.key, body(a.amount)).then().statusCode(201)
                    .header("Idempotent-Replayed", "true").body("id", equalTo(a.id));
            requests.incrementAndGet();
            replays.incrementAndGet();
            replaysThisRound.incrementAndGet();
        }

        void resetFastPathCount() {
            fastPathAtStart = fastPath();
            replaysThisRound.set(0);
        }

        /** Replays of this round answered on the fast path (Redis held the key), as the service counted them. */
        double fastPathRate() {
            double answered = fastPath() - fastPathAtStart;
            int sent = replaysThisRound.get();
            resetFastPathCount();
            return sent == 0 ? 0 : answered / sent;
        }

        private static double fastPath() {
            String page = Metrics.scrape();
            // replay: a completed entry, the row read for its current state; replay_final: the final entry answers
            return counted(page, "ledgerline_idempotency_total", "path=\"fast\"", "result=\"replay\"")
                    + counted(page, "ledgerline_idempotency_total", "path=\"fast\"", "result=\"replay_final\"");
        }
    }

    /** The sum of the samples of {@code name} whose labels include every fragment (0 when there is none). */
    private static double counted(String page, String name, String... labels) {
        double total = 0;
        for (String line : page.split("\n")) {
            if (line.startsWith(name + "{") && java.util.Arrays.stream(labels).allMatch(line::contains)) {
                total += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return total;
    }

    private static String principal() {
        return "cluster-" + UUID.randomUUID();
    }
}
