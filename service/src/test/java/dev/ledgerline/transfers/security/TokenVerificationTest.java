package dev.ledgerline.transfers.security;

import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Issuer;
import dev.ledgerline.transfers.support.Metrics;
import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.jwt.algorithm.SignatureAlgorithm;
import io.smallrye.jwt.build.Jwt;
import io.smallrye.jwt.build.JwtClaimsBuilder;
import org.junit.jupiter.api.Test;

import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPairGenerator;
import java.security.spec.ECGenParameterSpec;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Set;
import java.util.UUID;

import static dev.ledgerline.transfers.support.Issuer.devKey;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a token must be to be accepted (OWASP API2, broken authentication): signed with RS256 by the
 * configured key — {@code alg: none} and HS256 keyed with the public key (RS/HS confusion) are refused —
 * with the configured issuer and audience, a subject, and not expired beyond the 30 s clock skew.
 * An accepted token reading an unknown id gets 404; a refused one gets 401 before anything is looked up.
 */
@QuarkusTest
class TokenVerificationTest {

    private static final String ISSUER = "https://ledgerline.dev/dev-issuer";
    private static final String AUDIENCE = "ledgerline-transfers";
    private static final Set<String> GROUPS = Set.of("transfers.write", "transfers.read");

    @Test
    void aWellFormedTokenIsAcceptedAsTheControl() throws Exception {
        accepted(Jwt.issuer(ISSUER).audience(AUDIENCE).subject("token-alice").groups(GROUPS).sign(devKey()));
    }

    @Test
    void anUnsignedTokenWithAlgNoneIsRefused() {
        long now = Instant.now().getEpochSecond();
        String header = b64("{\"alg\":\"none\",\"typ\":\"JWT\"}");
        String claims = b64(("{\"iss\":\"%s\",\"aud\":\"%s\",\"sub\":\"token-alice\",\"groups\":[\"transfers.read\"],"
                + "\"iat\":%d,\"exp\":%d}").formatted(ISSUER, AUDIENCE, now, now + 600));
        refused(header + "." + claims + ".");
        refused(header + "." + claims);
    }

    @Test
    void anHs256TokenKeyedWithThePublicKeyIsRefused() throws Exception {
        byte[] pem = Issuer.devKeyPem("jwt-public.pem");
        byte[] der = Base64.getDecoder().decode(new String(pem, StandardCharsets.US_ASCII)
                .replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", ""));
        for (byte[] secret : new byte[][] {pem, der}) {
            String confused = claims().jws().algorithm(SignatureAlgorithm.HS256).sign(new SecretKeySpec(secret, "HmacSHA256"));
            refused(confused);
        }
    }

    @Test
    void aTokenSignedWithAnotherRsaAlgorithmIsRefused() throws Exception {
        refused(claims().jws().algorithm(SignatureAlgorithm.PS256).sign(devKey()));
    }

    /** ES256 is not accepted next to RS256: the one pinned algorithm decides, never the header (SECURITY.md). */
    @Test
    void anEs256TokenIsRefused() throws Exception {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
        generator.initialize(new ECGenParameterSpec("secp256r1"));
        refused(claims().jws().algorithm(SignatureAlgorithm.ES256).sign(generator.generateKeyPair().getPrivate()));
    }

    @Test
    void aTokenWithoutSubjectIsRefused() throws Exception {
        refused(Jwt.issuer(ISSUER).audience(AUDIENCE).groups(GROUPS).sign(devKey()));
        // a upn makes a principal name, but the principal of this service is the sub
        refused(Jwt.issuer(ISSUER).audience(AUDIENCE).upn("token-alice").groups(GROUPS).sign(devKey()));
        refused(Jwt.issuer(ISSUER).audience(AUDIENCE).subject("").upn("token-alice").groups(GROUPS).sign(devKey()));
    }

    @Test
    void issuerAndAudienceAreRequired() throws Exception {
        refused(Jwt.audience(AUDIENCE).subject("token-alice").groups(GROUPS).sign(devKey()));
        refused(Jwt.issuer("https://evil.example/issuer").audience(AUDIENCE).subject("token-alice").groups(GROUPS).sign(devKey()));
        refused(Jwt.issuer(ISSUER).subject("token-alice").groups(GROUPS).sign(devKey()));
        refused(Jwt.issuer(ISSUER).audience("another-service").subject("token-alice").groups(GROUPS).sign(devKey()));
    }

    /**
     * mp.jwt.verify.clock.skew=30: tolerated skew between the issuer's clock and ours, and no more. (The key is
     * smallrye-jwt's; a "clock-skew" spelling is ignored and leaves its default of 60 s, which 40 s past would pass.)
     */
    @Test
    void expiryAllowsThirtySecondsOfClockSkewAndNoMore() throws Exception {
        Instant now = Instant.now();
        accepted(claims().issuedAt(now.minusSeconds(600)).expiresAt(now.minusSeconds(10)).sign(devKey()));
        refused(claims().issuedAt(now.minusSeconds(600)).expiresAt(now.minusSeconds(40)).sign(devKey()));
    }

    /**
     * A token not valid yet ({@code nbf} beyond the skew) is refused. An {@code iat} in the future alone is
     * not checked (RFC 7519 makes it informational); the issuer's {@code exp} bounds the token either way.
     */
    @Test
    void aTokenNotYetValidIsRefused() throws Exception {
        Instant now = Instant.now();
        JwtClaimsBuilder future = claims().claim("nbf", now.plusSeconds(3600).getEpochSecond()).expiresAt(now.plusSeconds(7200));
        refused(future.sign(devKey()));
        accepted(claims().claim("nbf", now.plusSeconds(10).getEpochSecond()).sign(devKey()));
    }

    /** The genuine token is accepted (and remembered as verified) first: its tampered copies are still refused. */
    @Test
    void aTamperedPayloadIsRefused() throws Exception {
        String token = claims().sign(devKey());
        accepted(token);
        String[] parts = token.split("\\.");
        String payload = new String(Base64.getUrlDecoder().decode(parts[1]), StandardCharsets.UTF_8)
                .replace("token-alice", "token-admin");
        refused(parts[0] + "." + b64(payload) + "." + parts[2]);
    }

    @Test
    void aTamperedSignatureIsRefusedAfterTheGenuineTokenWasAccepted() throws Exception {
        String token = claims().sign(devKey());
        accepted(token);
        String signature = token.substring(token.lastIndexOf('.') + 1);
        char last = signature.charAt(signature.length() - 1);
        String forged = token.substring(0, token.lastIndexOf('.') + 1)
                + signature.substring(0, signature.length() - 1) + (last == 'A' ? 'B' : 'A');
        refused(forged);
        accepted(token);
    }

    /**
     * One signed token has one accepted spelling: padded segments and a last signature character that differs
     * only in its unused bits decode to the same signature, and are refused, so they cannot fill the cache
     * with copies of one token (each was a cache miss of its own).
     */
    @Test
    void onlyTheCanonicalUnpaddedSpellingOfATokenIsAccepted() throws Exception {
        String token = claims().sign(devKey());
        accepted(token);
        refused(token + "=");
        refused(token + "==");
        String[] parts = token.split("\\.");
        refused(parts[0] + "==." + parts[1] + "." + parts[2]);
        String signature = parts[2];
        // an RS256 signature is 256 bytes: 342 characters, the last carrying 2 data bits and 4 unused ones
        assertEquals(2, signature.length() % 4);
        String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        int last = alphabet.indexOf(signature.charAt(signature.length() - 1));
        for (int unused = 1; unused < 16; unused += 5) {
            String sameBytes = signature.substring(0, signature.length() - 1) + alphabet.charAt((last & 0x30) | unused);
            assertArrayEquals(Base64.getUrlDecoder().decode(signature), Base64.getUrlDecoder().decode(sameBytes));
            refused(parts[0] + "." + parts[1] + "." + sameBytes);
        }
        accepted(token);
    }

    /** A token presented again is not verified again (security/VerifiedTokens): the cache's hit counter moves. */
    @Test
    void aTokenPresentedAgainIsAnsweredFromTheVerifiedTokenCache() throws Exception {
        String token = claims().sign(devKey());
        accepted(token);
        double before = cacheHits();
        for (int i = 0; i < 3; i++) {
            accepted(token);
        }
        double hits = cacheHits() - before;
        assertTrue(hits >= 3, "hits counted for the repeated token: " + hits);
    }

    /**
     * Without {@code smallrye.jwt.path.groups} only the {@code groups} claim counts: roles in Keycloak's
     * {@code realm_access.roles} or in a namespaced claim authenticate the caller but grant no group
     * (KeycloakRolesTest, NamespacedRolesTest read them when configured).
     */
    @Test
    void rolesOutsideTheGroupsClaimGrantNothingByDefault() throws Exception {
        List<String> roles = List.of("transfers.write", "transfers.read");

        ProviderTokens.create(ProviderTokens.keycloak("token-kc", roles)).then().statusCode(403);
        ProviderTokens.create(ProviderTokens.namespaced("token-ns", roles)).then().statusCode(403);
        ProviderTokens.create(ProviderTokens.groups("token-groups", roles)).then().statusCode(201);
    }

    private static double cacheHits() {
        return Math.max(0, Metrics.sum("ledgerline_auth_token_cache_total", "result=\"hit\""));
    }

    private static JwtClaimsBuilder claims() {
        return Jwt.issuer(ISSUER).audience(AUDIENCE).subject("token-alice").groups(GROUPS);
    }

    private static void accepted(String token) {
        Api.get(token, UUID.randomUUID().toString()).then().statusCode(404);
    }

    private static void refused(String token) {
        Api.get(token, UUID.randomUUID().toString()).then()
                .statusCode(401)
                .contentType("application/problem+json")
                .header("WWW-Authenticate", equalTo("Bearer"));
    }

    private static String b64(String json) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(json.getBytes(StandardCharsets.UTF_8));
    }
}
