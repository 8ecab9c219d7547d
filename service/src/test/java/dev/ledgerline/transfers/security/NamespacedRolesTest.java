package dev.ledgerline.transfers.security;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static dev.ledgerline.transfers.security.ProviderTokens.create;

/**
 * A deployment behind a provider that puts roles in a namespaced custom claim (Auth0 requires custom claims to be
 * named by a URL) reads the groups from that claim: {@code smallrye.jwt.path.groups} with the name in double quotes,
 * since a path is otherwise split at each {@code /} (docs/configuration.md "Identity providers").
 */
@QuarkusTest
@TestProfile(NamespacedRolesTest.Namespaced.class)
class NamespacedRolesTest {

    public static class Namespaced implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("smallrye.jwt.path.groups", "\"" + ProviderTokens.NAMESPACED_ROLES + "\"");
        }
    }

    @Test
    void aNamespacedRoleAuthorisesAsAGroupDoes() throws Exception {
        String token = ProviderTokens.namespaced("ns-alice", List.of("transfers.write", "transfers.read"));

        create(token).then().statusCode(201);
        create(token).then().statusCode(201);
    }

    @Test
    void aNamespacedRoleOutsideTheScopeIsForbidden() throws Exception {
        create(ProviderTokens.namespaced("ns-bob", List.of("transfers.read"))).then().statusCode(403);
    }

    @Test
    void aGroupsClaimGrantsNothingOnceTheRolesAreReadFromTheNamespacedClaim() throws Exception {
        create(ProviderTokens.groups("ns-carol", List.of("transfers.write", "transfers.read"))).then().statusCode(403);
    }
}
