package dev.ledgerline.transfers.pipeline;

import dev.ledgerline.transfers.redis.RedisCommands;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.UUID;

/**
 * The per-transfer worker lock: {@code SET lock:transfer:{id} <token> NX PX ttl}, released only by the
 * holder through the compare-and-delete script, never by a plain DEL. It is a lease that keeps workers
 * out of each other's way; it is never what protects money — the database claim and version fence do.
 */
@ApplicationScoped
public class RedisLock {

    private static final SecureRandom RANDOM = new SecureRandom();

    private final RedisCommands redis;

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
        return redis.setIfAbsent(key, token, ttl.toMillis());
    }

    /** {@code true} when the lock was still ours and is now released; another holder's lock is never deleted. */
    public Uni<Boolean> release(String key, String token) {
        return redis.deleteIfHolds(key, token);
    }
}
