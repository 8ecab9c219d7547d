package dev.ledgerline.transfers.security;

import com.github.benmanes.caffeine.cache.Ticker;
import org.eclipse.microprofile.jwt.JsonWebToken;
import org.junit.jupiter.api.Test;

import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The verified-token cache on a clock of its own: how long an entry is trusted, and that it keeps caching when full. */
class VerifiedTokensTest {

    private static final long T0 = 1_800_000_000_000L; // ms

    @Test
    void anEntryIsTrustedForItsTtlThenVerifiedAgain() {
        VerifiedTokens cache = new VerifiedTokens(10, 60_000);
        JsonWebToken jwt = expiringAt(T0 / 1000 + 3600);
        cache.put("a", jwt, T0);
        assertSame(jwt, cache.get("a", T0 + 59_999));
        assertNull(cache.get("a", T0 + 60_000), "past the ttl the token must be verified in full again");
        assertEquals(0, cache.size(), "and the stale entry is gone");
    }

    @Test
    void anEntryIsNeverTrustedPastTheTokensOwnExpiry() {
        VerifiedTokens cache = new VerifiedTokens(10, 60_000);
        JsonWebToken jwt = expiringAt(T0 / 1000 + 5);
        cache.put("a", jwt, T0);
        assertSame(jwt, cache.get("a", T0 + 4_999));
        assertNull(cache.get("a", T0 + 5_000));
    }

    @Test
    void aTokenAlreadyPastItsExpiryIsNotRemembered() {
        // accepted within the clock skew, so verified in full each time
        VerifiedTokens cache = new VerifiedTokens(10, 60_000);
        cache.put("a", expiringAt(T0 / 1000 - 10), T0);
        assertNull(cache.get("a", T0));
    }

    @Test
    void anEntryExpiresOnTheCachesOwnClockAtTheTokensExpiry() {
        AtomicLong nanos = new AtomicLong();
        VerifiedTokens cache = new VerifiedTokens(10, 60_000, nanos::get, Runnable::run);
        JsonWebToken jwt = expiringAt(T0 / 1000 + 5);
        cache.put("a", jwt, T0);
        nanos.set(TimeUnit.MILLISECONDS.toNanos(4_999));
        assertSame(jwt, cache.get("a", T0));
        nanos.set(TimeUnit.MILLISECONDS.toNanos(5_000));
        assertNull(cache.get("a", T0), "5 s after it was stored the entry is gone, even if the wall clock stood still");
    }

    @Test
    void aFullCacheKeepsRememberingNewTokensWithinItsBound() {
        VerifiedTokens cache = new VerifiedTokens(100, 60_000, Ticker.systemTicker(), Runnable::run);
        for (int i = 0; i < 1_000; i++) {
            cache.put("t" + i, expiringAt(T0 / 1000 + 3600), T0);
        }
        assertTrue(cache.size() <= 100, "bounded: " + cache.size());
        JsonWebToken late = expiringAt(T0 / 1000 + 3600);
        cache.put("late", late, T0);
        assertSame(late, cache.get("late", T0), "a token first seen after the cache filled up is remembered");
        for (int i = 0; i < 50; i++) {
            assertSame(late, cache.get("late", T0));
            cache.put("burst" + i, expiringAt(T0 / 1000 + 3600), T0);
        }
        assertSame(late, cache.get("late", T0), "a token in use stays while one-off tokens come and go");
        assertTrue(cache.size() <= 100, "bounded: " + cache.size());
    }

    @Test
    void sizeZeroRemembersNothing() {
        VerifiedTokens cache = new VerifiedTokens(0, 60_000);
        cache.put("a", expiringAt(T0 / 1000 + 3600), T0);
        assertNull(cache.get("a", T0));
    }

    @Test
    void theSubjectIsAnsweredOnlyForATrustedTokenWithTheGroupAndASubject() {
        VerifiedTokens cache = new VerifiedTokens(10, 60_000);
        cache.put("writer", token(T0 / 1000 + 3600, "ada", Set.of("transfers.write", "transfers.read")), T0);
        cache.put("reader", token(T0 / 1000 + 3600, "bob", Set.of("transfers.read")), T0);
        cache.put("blank", token(T0 / 1000 + 3600, " ", Set.of("transfers.write")), T0);
        cache.put("none", token(T0 / 1000 + 3600, null, null), T0);
        assertEquals("ada", cache.subjectWithGroup("writer", "transfers.write", T0));
        assertNull(cache.subjectWithGroup("reader", "transfers.write", T0));
        assertNull(cache.subjectWithGroup("blank", "transfers.write", T0));
        assertNull(cache.subjectWithGroup("none", "transfers.write", T0));
        assertNull(cache.subjectWithGroup("unknown", "transfers.write", T0));
        assertNull(cache.subjectWithGroup("writer", "transfers.write", T0 + 60_000), "no longer trusted: verified again");
    }

    private static JsonWebToken expiringAt(long expSeconds) {
        return token(expSeconds, null, null);
    }

    private static JsonWebToken token(long expSeconds, String subject, Set<String> groups) {
        return new JsonWebToken() {
            @Override
            public String getName() {
                return "someone";
            }

            @Override
            public Set<String> getClaimNames() {
                return Set.of("exp");
            }

            @Override
            @SuppressWarnings("unchecked")
            public <T> T getClaim(String claimName) {
                return switch (claimName) {
                    case "exp" -> (T) Long.valueOf(expSeconds);
                    case "sub" -> (T) subject;
                    case "groups" -> (T) groups;
                    default -> null;
                };
            }
        };
    }
}
