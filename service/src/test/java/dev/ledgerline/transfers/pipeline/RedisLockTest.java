package dev.ledgerline.transfers.pipeline;

import dev.ledgerline.transfers.redis.RedisCommands;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The lock against a real Redis: only the holder's token releases it. */
@QuarkusTest
class RedisLockTest {

    private static final Duration WAIT = Duration.ofSeconds(5);

    @Inject
    RedisLock lock;

    @Inject
    RedisCommands redis;

    @Test
    void aLockIsNeverReleasedByAWorkerThatDoesNotHoldIt() {
        String key = RedisLock.key(UUID.randomUUID());
        String holder = RedisLock.newToken();
        String intruder = RedisLock.newToken();

        assertTrue(lock.acquire(key, holder, Duration.ofSeconds(10)).await().atMost(WAIT));
        assertFalse(lock.acquire(key, intruder, Duration.ofSeconds(10)).await().atMost(WAIT), "NX: a second acquire fails");
        assertFalse(lock.release(key, intruder).await().atMost(WAIT), "a foreign token releases nothing");
        assertEquals(holder, redis.get(key).await().atMost(WAIT), "the holder still holds the lock");

        assertTrue(lock.release(key, holder).await().atMost(WAIT));
        assertNull(redis.get(key).await().atMost(WAIT));
    }

    @Test
    void aWorkerWhoseLockExpiredCannotReleaseItsSuccessorsLock() throws Exception {
        String key = RedisLock.key(UUID.randomUUID());
        String stale = RedisLock.newToken();
        String successor = RedisLock.newToken();

        assertTrue(lock.acquire(key, stale, Duration.ofMillis(100)).await().atMost(WAIT));
        org.awaitility.Awaitility.await().atMost(WAIT).until(() -> redis.get(key).await().atMost(WAIT) == null);
        assertTrue(lock.acquire(key, successor, Duration.ofSeconds(10)).await().atMost(WAIT));

        assertFalse(lock.release(key, stale).await().atMost(WAIT), "the stale worker's release is refused");
        assertEquals(successor, redis.get(key).await().atMost(WAIT));
        assertTrue(lock.release(key, successor).await().atMost(WAIT));
    }
}
