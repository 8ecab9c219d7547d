package dev.ledgerline.transfers.security;

import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Issuer;
import io.restassured.response.Response;
import io.smallrye.jwt.build.Jwt;
import io.smallrye.jwt.build.JwtClaimsBuilder;

import java.util.List;
import java.util.Map;

/**
 * Tokens shaped like those of identity providers that do not put roles in a {@code groups} claim, signed with the key
 * the test profile trusts: Keycloak's {@code realm_access.roles}, and a namespaced custom claim such as an Auth0 Action
 * adds. Each carries its roles in that one place only.
 */
final class ProviderTokens {

    /** The issuer and audience of the test profile ({@code %test.mp.jwt.verify.*}). */
    static final String ISSUER = "https://ledgerline.dev/dev-issuer";
    static final String AUDIENCE = "ledgerline-transfers";
    /** A namespaced roles claim, as Auth0 requires custom claims to be (a URL the tenant owns). */
    static final String NAMESPACED_ROLES = "https://ledgerline.example/roles";

    private ProviderTokens() {
    }

    /** Keycloak's shape: {@code "realm_access": {"roles": [...]}}, no {@code groups} claim. */
    static String keycloak(String subject, List<String> roles) throws Exception {
        return sign(base(subject).claim("realm_access", Map.of("roles", roles)));
    }

    /** A namespaced claim holding the roles, no {@code groups} claim. */
    static String namespaced(String subject, List<String> roles) throws Exception {
        return sign(base(subject).claim(NAMESPACED_ROLES, roles));
    }

    /** The shape the service reads by default: a top-level {@code groups} claim. */
    static String groups(String subject, List<String> groups) throws Exception {
        return sign(base(subject).claim("groups", groups));
    }

    /** {@code POST /v1/transfers} with {@code token}. */
    static Response create(String token) {
        return Api.post(token, Api.newKey(), Api.body(1250));
    }

    private static JwtClaimsBuilder base(String subject) {
        return Jwt.issuer(ISSUER).audience(AUDIENCE).subject(subject).expiresIn(Issuer.LIFETIME);
    }

    private static String sign(JwtClaimsBuilder claims) throws Exception {
        return claims.sign(Issuer.devKey());
    }
}
