package dev.ledgerline.transfers.ratelimit;

import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.devstack.LocalRedis;
import dev.ledgerline.transfers.problem.ProblemException;
import dev.ledgerline.transfers.problem.ProblemType;
import dev.ledgerline.transfers.redis.RedisCommands;
import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Await;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.Metrics;
import dev.ledgerline.transfers.support.TestStack;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static dev.ledgerline.transfers.support.Api.body;
import static dev.ledgerline.transfers.support.Api.newKey;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.matchesPattern;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Per-principal token buckets: writes 3 at once, reads 5 at once, then one per 100 s each (lowered from
 * the defaults by the profile, so slow as to never refill within a test on a loaded machine: a test that
 * spends a bucket and expects a 429 must not race a refill). Shared through Redis, per instance while Redis
 * is away.
 */
@QuarkusTest
@TestProfile(RateLimitTest.LowLimits.class)
class RateLimitTest {

    public static class LowLimits implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "ledgerline.rate-limit.writes.per-second", "0.01",
                    "ledgerline.rate-limit.writes.burst", "3",
                    "ledgerline.rate-limit.reads.per-second", "0.01",
                    "ledgerline.rate-limit.reads.burst", "5");
        }
    }

    private static final Duration WAIT = Duration.ofSeconds(5);
    /** Whole seconds until the next token, at most one refill interval (100 s). */
    private static final String RETRY_AFTER = "[1-9][0-9]?|100";

    @Inject
    RedisCommands redis;

    @Inject
    LedgerlineConfig config;

    @AfterEach
    void redisBack() throws Exception {
        LocalRedis server = TestStack.current().redis();
        if (server.isRunning()) {
            server.resume();
        } else {
            server.restart();
        }
        TestStack.closeBreakers();
    }

    @Test
    void theBurstIsServedThenA429WithRetryAfterAndNothingIsWritten() {
        String principal = fresh("burst");
        String token = Api.writer(principal);
        for (int i = 0; i < 3; i++) {
            Api.post(token, newKey(), body(100 + i)).then().statusCode(201);
        }
        Api.post(token, newKey(), body(200)).then()
                .statusCode(429)
                .contentType("application/problem+json")
                .header("Retry-After", matchesPattern(RETRY_AFTER))
                .body("type", equalTo(ProblemType.RATE_LIMITED.uri()))
                .body("status", equalTo(429));
        assertEquals(3, Db.count("SELECT count(*) FROM transfers WHERE user_id = ?", principal),
                "a limited request creates nothing");
    }

    @Test
    void readsHaveTheirOwnLooserBucketAndEachPrincipalItsOwn() {
        String principal = fresh("reader");
        String token = Api.writer(principal);
        String id = Api.create(token, 300);
        for (int i = 0; i < 3; i++) {
            Api.post(token, newKey(), body(1)).then().statusCode(i < 2 ? 201 : 429);
        }
        // writes are exhausted; reads are not
        for (int i = 0; i < 5; i++) {
            Api.get(token, id).then().statusCode(200);
        }
        Api.get(token, id).then().statusCode(429).header("Retry-After", matchesPattern(RETRY_AFTER))
                .contentType("application/problem+json");
        Api.as(token).get("/v1/transfers/" + id + "/events").then().statusCode(429);
        Api.as(token).get("/v1/me/transfers").then().statusCode(429).body("type", equalTo(ProblemType.RATE_LIMITED.uri()));
        Api.as(token).queryParam("idempotencyKey", "reader:1").get("/v1/transfers").then().statusCode(429);

        // another principal is untouched by all of that
        String other = Api.writer(fresh("neighbour"));
        Api.post(other, newKey(), body(5)).then().statusCode(201);
        Api.get(other, UUID.randomUUID().toString()).then().statusCode(404);
    }

    @Test
    void theOperationsListingIsLimitedLikeAnyRead() {
        String ops = Api.token(fresh("ops"), List.of("transfers.read.all"));
        for (int i = 0; i < 5; i++) {
            Api.as(ops).get("/v1/transfers?status=pending&limit=1").then().statusCode(200);
        }
        Api.as(ops).get("/v1/transfers?status=pending&limit=1").then().statusCode(429);
    }

    /**
     * What a second instance would do, minus the HTTP: a separate limiter with its own (empty) in-memory
     * buckets, on the same Redis. It refuses the principal this instance exhausted, so the count is the
     * one in Redis. (PackagedJarIT does the same with two running services.)
     */
    @Test
    void theBucketLivesInRedisSoAnotherInstanceSeesItExhausted() {
        String principal = fresh("shared");
        String token = Api.writer(principal);
        for (int i = 0; i < 3; i++) {
            Api.post(token, newKey(), body(7)).then().statusCode(201);
        }
        RateLimiter otherInstance = new RateLimiter(redis, config, new SimpleMeterRegistry());
        ProblemException limited = assertThrows(ProblemException.class,
                () -> otherInstance.admit(principal, RateLimiter.Kind.WRITE).await().atMost(WAIT));
        assertEquals(ProblemType.RATE_LIMITED, limited.type());
        otherInstance.admit(fresh("untouched"), RateLimiter.Kind.WRITE).await().atMost(WAIT);

        // the key space is hashed: no principal name appears in Redis
        String keys = redis.execute("KEYS", "rl:*").await().atMost(WAIT).toString();
        assertTrue(keys.contains(RateLimiter.redisKey(principal, RateLimiter.Kind.WRITE)), keys);
        assertFalse(keys.contains(principal), keys);
    }

    /**
     * A replay its final entry answers as kept costs Redis one {@code GET} and spends this instance's replay bucket (the
     * same burst), not the shared one: the principal's new transfers keep their tokens, and the replays get their own 429.
     */
    @Test
    void aReplayAnsweredAsKeptSpendsThisInstancesReplayBucketNotTheSharedOne() {
        String principal = fresh("replayer");
        String token = Api.writer(principal);
        String key = newKey();
        String body = body(11);
        String id = Api.post(token, key, body).then().statusCode(201).extract().path("id");
        Await.status(id, "sent", Duration.ofSeconds(20));
        // the entry was written while the transfer was pending: this replay reads the row (a shared token) and keeps it final
        Api.post(token, key, body).then().statusCode(201).header("Idempotent-Replayed", "true");
        double allowed = Metrics.sum("ledgerline_rate_limit_total", "result=\"allowed\",store=\"replay\"");
        double limited = Metrics.sum("ledgerline_rate_limit_total", "result=\"limited\",store=\"replay\"");
        for (int i = 0; i < 3; i++) {
            Api.post(token, key, body).then().statusCode(201).header("Idempotent-Replayed", "true").body("id", equalTo(id));
        }
        Api.post(token, key, body).then().statusCode(429).header("Retry-After", matchesPattern(RETRY_AFTER))
                .body("type", equalTo(ProblemType.RATE_LIMITED.uri()));
        assertEquals(allowed + 3, Metrics.sum("ledgerline_rate_limit_total", "result=\"allowed\",store=\"replay\""));
        assertEquals(limited + 1, Metrics.sum("ledgerline_rate_limit_total", "result=\"limited\",store=\"replay\""));

        // two shared tokens were spent (the first use and the replay that read the row): one is left
        Api.post(token, newKey(), body(12)).then().statusCode(201);
        Api.post(token, newKey(), body(13)).then().statusCode(429);
        // a body other than the kept one is not answered as kept: it spends the shared bucket, which is empty
        Api.post(token, key, body(14)).then().statusCode(429);
        assertEquals(2, Db.count("SELECT count(*) FROM transfers WHERE user_id = ?", principal));
    }

    @Test
    void withRedisPausedTheLimitHoldsPerInstanceAndNoRequestFails() throws Exception {
        String principal = fresh("degraded");
        String token = Api.writer(principal);
        TestStack.current().redis().pause();
        for (int i = 0; i < 3; i++) {
            Api.post(token, newKey(), body(9)).then().statusCode(201);
        }
        Api.post(token, newKey(), body(9)).then().statusCode(429).header("Retry-After", matchesPattern(RETRY_AFTER))
                .body("type", equalTo(ProblemType.RATE_LIMITED.uri()));
        assertEquals(3, Db.count("SELECT count(*) FROM transfers WHERE user_id = ?", principal));
    }

    @Test
    void withRedisDeadTheLimitStillHolds() {
        String principal = fresh("dead");
        String token = Api.writer(principal);
        TestStack.current().redis().kill();
        for (int i = 0; i < 5; i++) {
            Api.get(token, UUID.randomUUID().toString()).then().statusCode(404);
        }
        Api.get(token, UUID.randomUUID().toString()).then().statusCode(429);
    }

    private static String fresh(String name) {
        return name + "-" + UUID.randomUUID();
    }
}
