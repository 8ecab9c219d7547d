package dev.ledgerline.transfers.pipeline;

import dev.ledgerline.transfers.redis.RedisCommands;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The per-transfer worker lock: {@code SET lock:transfer:{id} <token> NX PX ttl}, released only by the
 * holder through the compare-and-delete script, never by a plain DEL. It is a lease that keeps workers
 * out of each other's way; it is never what protects money — the database claim and version fence do.
 */
@ApplicationScoped
public class RedisLock {

    private static final SecureRandom RANDOM = new SecureRandom();

    private final RedisCommands redis;
    /** Locks this instance holds right now (key → token), so a shutdown can release the ones still held. */
    private final Map<String, String> held = new ConcurrentHashMap<>();

    public RedisLock(RedisCommands redis) {
        this.redis = redis;
    }

    public static String key(UUID transferId) {
        return "lock:transfer:" + transferId;
    }

    /** 128 random bits: a holder's proof of ownership. */
    public static String newToken() {
        byte[] bytes = new byte[16];
        RANDOM.nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }

    /** {@code true} when this token now holds the lock; a failed {@code Uni} when Redis could not answer. */
    public Uni<Boolean> acquire(String key, String token, Duration ttl) {
        return redis.setIfAbsent(key, token, ttl.toMillis()).invoke(acquired -> {
            if (acquired) {
                held.put(key, token);
            }
        });
    }

    /** {@code true} when the lock was still ours and is now released; another holder's lock is never deleted. */
    public Uni<Boolean> release(String key, String token) {
        held.remove(key, token);
        return redis.deleteIfHolds(key, token);
    }

    /**
     * Releases every lock this instance still holds, each by compare-and-delete, waiting at most {@code atMost}
     * in all (blocking: for the shutdown, off the event loop). Another instance can then take those transfers
     * at once instead of after the lock TTL; a lock that is not released simply expires. Returns how many were
     * released.
     */
    public int releaseAll(Duration atMost) {
        List<Uni<Boolean>> releases = new ArrayList<>();
        held.forEach((key, token) -> releases.add(release(key, token).onFailure().recoverWithItem(false)));
        if (releases.isEmpty()) {
            return 0;
        }
        List<Boolean> released = Uni.join().all(releases).andCollectFailures()
                .onFailure().recoverWithItem(List.of())
                .await().atMost(atMost); // blocking-ok: the shutdown hook, never an event-loop thread
        return (int) released.stream().filter(Boolean.TRUE::equals).count();
    }
}
