package dev.ledgerline.transfers.security;

import org.eclipse.microprofile.jwt.JsonWebToken;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Tokens whose signature and claims were verified, by their exact text, for a short while.
 *
 * <p>Clients present the same bearer token on request after request; verifying its RS256 signature and
 * parsing its claims every time was the largest CPU cost of a replay or a status poll (bench/FINDINGS.md).
 * An entry only ever holds what a full verification proved, so a token that differs by one character
 * (a forged signature, edited claims) is a different key and is verified in full. An entry is trusted
 * until the earlier of the token's {@code exp} and {@code ttl} after its verification; after that the
 * token is verified again, so the clock-skew allowance and every other rule still apply exactly as
 * without the cache. When full, expired entries are dropped first; if it is still full, new tokens are
 * simply verified every time.
 */
final class VerifiedTokens {

    private record Entry(JsonWebToken token, long trustedUntilMillis) {
    }

    private final Map<String, Entry> entries = new ConcurrentHashMap<>();
    private final int maxEntries;
    private final long ttlMillis;

    VerifiedTokens(int maxEntries, long ttlMillis) {
        this.maxEntries = maxEntries;
        this.ttlMillis = ttlMillis;
    }

    /** The verified token, or {@code null} when it has to be verified (again). */
    JsonWebToken get(String raw, long nowMillis) {
        Entry e = entries.get(raw);
        if (e == null) {
            return null;
        }
        if (nowMillis >= e.trustedUntilMillis()) {
            entries.remove(raw, e);
            return null;
        }
        return e.token();
    }

    /** Remembers a token that was just verified in full. */
    void put(String raw, JsonWebToken verified, long nowMillis) {
        if (maxEntries <= 0) {
            return;
        }
        long until = nowMillis + ttlMillis;
        long exp = verified.getExpirationTime();
        if (exp > 0) {
            until = Math.min(until, exp * 1000L);
        }
        if (until <= nowMillis) {
            return;
        }
        if (entries.size() >= maxEntries) {
            entries.values().removeIf(e -> nowMillis >= e.trustedUntilMillis());
            if (entries.size() >= maxEntries) {
                return;
            }
        }
        entries.put(raw, new Entry(verified, until));
    }

    int size() {
        return entries.size();
    }
}
