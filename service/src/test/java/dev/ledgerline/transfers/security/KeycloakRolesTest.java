package dev.ledgerline.transfers.security;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static dev.ledgerline.transfers.security.ProviderTokens.create;

/**
 * A deployment behind Keycloak reads the groups from {@code realm_access.roles} ({@code smallrye.jwt.path.groups},
 * docs/configuration.md "Identity providers"): a role there is a group, with the same authorization as the
 * {@code groups} claim, through the token cache as on its first verification; a top-level {@code groups} claim then
 * grants nothing.
 */
@QuarkusTest
@TestProfile(KeycloakRolesTest.Keycloak.class)
class KeycloakRolesTest {

    public static class Keycloak implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("smallrye.jwt.path.groups", "realm_access/roles");
        }
    }

    @Test
    void aRealmRoleAuthorisesAsAGroupDoes() throws Exception {
        String token = ProviderTokens.keycloak("kc-alice", List.of("transfers.write", "transfers.read", "offline_access"));

        create(token).then().statusCode(201);
        // the second request is answered from the verified-token cache: the same groups
        create(token).then().statusCode(201);
    }

    @Test
    void aRealmRoleOutsideTheScopeIsForbidden() throws Exception {
        create(ProviderTokens.keycloak("kc-bob", List.of("transfers.read"))).then().statusCode(403);
    }

    @Test
    void aGroupsClaimGrantsNothingOnceTheRolesAreReadFromTheRealm() throws Exception {
        create(ProviderTokens.groups("kc-carol", List.of("transfers.write", "transfers.read"))).then().statusCode(403);
    }
}
