package dev.ledgerline.transfers.security;

import dev.ledgerline.transfers.hashing.LongText;
import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.Ticker;
import org.eclipse.microprofile.jwt.JsonWebToken;

import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * Tokens whose signature and claims were verified, by their exact text, for a short while.
 *
 * <p>Clients present the same bearer token on request after request; verifying its RS256 signature and
 * parsing its claims every time was the largest CPU cost of a replay or a status poll (bench/FINDINGS.md).
 * An entry only ever holds what a full verification proved, so a token that differs by one character
 * (a forged signature, edited claims) is a different key and is verified in full. An entry is trusted
 * until the earlier of the token's {@code exp} and {@code ttl} after its verification; after that the
 * token is verified again, so the clock-skew allowance and every other rule still apply exactly as
 * without the cache.
 *
 * <p>A Caffeine cache bounded by {@code maxEntries}: each entry expires on its own at that instant, and when
 * the cache is full Caffeine evicts (by frequency and recency) to make room, so new tokens keep being cached
 * and a burst of one-off tokens cannot push the clients that return out.
 */
final class VerifiedTokens {

    /**
     * {@code trustNanos}: how long the entry is trusted from its creation, the same span as {@code trustedUntilMillis};
     * {@code subject} ({@code null} when it has none or a blank one) and {@code groups}: the token's, read once when it
     * was verified (smallrye-jwt copies the groups into a new set on every call).
     */
    private record Entry(JsonWebToken token, String subject, Set<String> groups, long trustedUntilMillis, long trustNanos) {
    }

    /** Absent when {@code maxEntries} is 0: every token is verified in full. */
    private final Cache<LongText, Entry> entries;
    private final long ttlMillis;

    VerifiedTokens(int maxEntries, long ttlMillis) {
        this(maxEntries, ttlMillis, Ticker.systemTicker(), null);
    }

    /** With a ticker and an executor of the caller's choosing (tests: a clock of their own, eviction on the caller's thread). */
    VerifiedTokens(int maxEntries, long ttlMillis, Ticker ticker, Executor executor) {
        this.ttlMillis = ttlMillis;
        if (maxEntries <= 0) {
            this.entries = null;
            return;
        }
        Caffeine<Object, Object> builder = Caffeine.newBuilder().maximumSize(maxEntries).ticker(ticker);
        if (executor != null) {
            builder.executor(executor);
        }
        this.entries = builder.expireAfter(new Expiry<LongText, Entry>() {
            @Override
            public long expireAfterCreate(LongText raw, Entry entry, long nowNanos) {
                // Caffeine's clock is monotonic and exp is wall-clock time: put() converted the span once
                return entry.trustNanos();
            }

            @Override
            public long expireAfterUpdate(LongText raw, Entry entry, long nowNanos, long remainingNanos) {
                return entry.trustNanos();
            }

            @Override
            public long expireAfterRead(LongText raw, Entry entry, long nowNanos, long remainingNanos) {
                return remainingNanos;
            }
        }).build();
    }

    /** The verified token, or {@code null} when it has to be verified (again). */
    JsonWebToken get(String raw, long nowMillis) {
        Entry e = entry(raw, nowMillis);
        return e == null ? null : e.token();
    }

    /**
     * The subject of the verified token {@code raw} when it has one (not blank) and {@code group} is among its groups;
     * {@code null} otherwise, and when the token has to be verified (again).
     */
    String subjectWithGroup(String raw, String group, long nowMillis) {
        Entry e = entry(raw, nowMillis);
        return e == null || e.subject() == null || !e.groups().contains(group) ? null : e.subject();
    }

    private Entry entry(String raw, long nowMillis) {
        if (entries == null) {
            return null;
        }
        // keyed by the exact text, hashed on a sample of it: a token is ~800 characters, made afresh per request
        LongText key = LongText.of(raw);
        Entry e = entries.getIfPresent(key);
        if (e == null) {
            return null;
        }
        if (nowMillis >= e.trustedUntilMillis()) {
            // the wall clock passed the token's exp before the monotonic expiry did (a clock step): not trusted
            entries.asMap().remove(key, e);
            return null;
        }
        return e;
    }

    /** Remembers a token that was just verified in full. */
    void put(String raw, JsonWebToken verified, long nowMillis) {
        if (entries == null) {
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
        Set<String> groups = verified.getGroups();
        String subject = verified.getSubject();
        // never handed out: the set is only asked whether it holds a group
        entries.put(LongText.of(raw), new Entry(verified, subject == null || subject.isBlank() ? null : subject,
                groups == null ? Set.of() : new HashSet<>(groups), until, TimeUnit.MILLISECONDS.toNanos(until - nowMillis)));
    }

    /** Entries held now, after pending evictions ran. */
    long size() {
        if (entries == null) {
            return 0;
        }
        entries.cleanUp();
        return entries.estimatedSize();
    }
}
