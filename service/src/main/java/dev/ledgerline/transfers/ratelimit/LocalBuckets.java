package dev.ledgerline.transfers.ratelimit;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The fallback of {@link RateLimiter} while Redis cannot answer: the same token buckets, kept in this
 * instance's memory. Bounded: beyond {@code maxBuckets} principals, buckets that have refilled
 * completely (indistinguishable from new ones) are dropped first, and if that is not enough the map is
 * emptied — which only hands out fresh buckets, never an unlimited pass.
 */
final class LocalBuckets {

    private static final class Bucket {
        private final double rate;
        private final int burst;
        private double tokens;
        private long at;

        Bucket(double rate, int burst, long now) {
            this.rate = rate;
            this.burst = burst;
            this.tokens = burst;
            this.at = now;
        }

        /** 0 when a token was taken, else the microseconds until one is available. */
        synchronized long take(long now) {
            if (now > at) {
                tokens = Math.min(burst, tokens + (now - at) / 1_000_000_000.0 * rate);
                at = now;
            }
            if (tokens >= 1) {
                tokens -= 1;
                return 0L;
            }
            return Math.max(1L, (long) Math.ceil((1 - tokens) * 1_000_000 / rate));
        }

        synchronized boolean refilled(long now) {
            return tokens + (now - at) / 1_000_000_000.0 * rate >= burst;
        }
    }

    private final Map<String, Bucket> buckets = new ConcurrentHashMap<>();
    private final int maxBuckets;

    LocalBuckets(int maxBuckets) {
        this.maxBuckets = maxBuckets;
    }

    long take(String key, double rate, int burst, long nowNanos) {
        if (buckets.size() >= maxBuckets && !buckets.containsKey(key)) {
            buckets.values().removeIf(b -> b.refilled(nowNanos));
            if (buckets.size() >= maxBuckets) {
                buckets.clear();
            }
        }
        return buckets.computeIfAbsent(key, k -> new Bucket(rate, burst, nowNanos)).take(nowNanos);
    }

    int size() {
        return buckets.size();
    }
}
