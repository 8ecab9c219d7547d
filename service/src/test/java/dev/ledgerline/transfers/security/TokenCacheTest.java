package dev.ledgerline.transfers.security;

import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Metrics;
import dev.ledgerline.transfers.support.SideSettings;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.smallrye.jwt.build.Jwt;
import io.smallrye.jwt.build.JwtClaimsBuilder;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import java.util.UUID;

import static dev.ledgerline.transfers.support.Issuer.devKey;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The verified-token cache seen from a client (security/VerifiedTokens): a cached token is refused once its
 * {@code exp} has passed, and a cache that filled up keeps answering new tokens from memory. Its profile has
 * a clock skew of 1 s, so a token dies right after its {@code exp}, and room for only a few tokens (both in
 * {@link SideSettings}).
 */
@QuarkusTest
@TestProfile(SideSettings.class)
class TokenCacheTest {

    private static final Set<String> GROUPS = Set.of("transfers.write", "transfers.read");

    @Test
    void aCachedTokenIsRefusedOnceItsExpiryHasPassed() throws Exception {
        // long enough for two requests and a scrape on a loaded machine, short enough to wait out
        String token = claims("expiring").expiresAt(Instant.now().plusSeconds(8)).sign(devKey());
        status(token, 404);
        double before = hits();
        status(token, 404);
        assertTrue(hits() - before >= 1, "the second request was answered from the cache");
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                .until(() -> status(token) == 401);
    }

    @Test
    void aFullCacheStillRemembersANewToken() throws Exception {
        for (int i = 0; i < 12; i++) {
            status(claims("filler-" + i).sign(devKey()), 404);
        }
        String token = claims("after-full").sign(devKey());
        status(token, 404);
        double before = hits();
        status(token, 404);
        assertTrue(hits() - before >= 1, "a token first seen after the cache filled up is answered from it");
    }

    private static JwtClaimsBuilder claims(String subject) {
        return Jwt.issuer("https://ledgerline.dev/dev-issuer").audience("ledgerline-transfers").subject(subject).groups(GROUPS);
    }

    /** An accepted token reading an unknown id gets 404; a refused one 401. */
    private static void status(String token, int expected) {
        Api.get(token, UUID.randomUUID().toString()).then().statusCode(expected);
    }

    private static int status(String token) {
        return Api.get(token, UUID.randomUUID().toString()).then().extract().statusCode();
    }

    private static double hits() {
        return Math.max(0, Metrics.sum("ledgerline_auth_token_cache_total", "result=\"hit\""));
    }
}
