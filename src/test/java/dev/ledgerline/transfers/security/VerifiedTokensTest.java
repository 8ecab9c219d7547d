package dev.ledgerline.transfers.security;

import org.eclipse.microprofile.jwt.JsonWebToken;
import org.junit.jupiter.api.Test;

import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

/** The verified-token cache on a clock of its own: how long an entry is trusted, and what happens when it is full. */
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
    void whenFullExpiredEntriesMakeRoomAndOtherwiseNewTokensAreNotRemembered() {
        VerifiedTokens cache = new VerifiedTokens(2, 60_000);
        cache.put("a", expiringAt(T0 / 1000 + 1), T0);
        cache.put("b", expiringAt(T0 / 1000 + 3600), T0);
        JsonWebToken c = expiringAt(T0 / 1000 + 3600);
        cache.put("c", c, T0 + 2_000); // "a" has expired: dropped to make room
        assertSame(c, cache.get("c", T0 + 2_000));
        cache.put("d", expiringAt(T0 / 1000 + 3600), T0 + 2_000); // full of live entries
        assertNull(cache.get("d", T0 + 2_000));
        assertEquals(2, cache.size());
    }

    @Test
    void sizeZeroRemembersNothing() {
        VerifiedTokens cache = new VerifiedTokens(0, 60_000);
        cache.put("a", expiringAt(T0 / 1000 + 3600), T0);
        assertNull(cache.get("a", T0));
    }

    private static JsonWebToken expiringAt(long expSeconds) {
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
                return "exp".equals(claimName) ? (T) Long.valueOf(expSeconds) : null;
            }
        };
    }
}
