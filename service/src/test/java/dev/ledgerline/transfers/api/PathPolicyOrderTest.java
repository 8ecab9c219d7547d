package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.support.Api;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.quarkus.security.identity.SecurityIdentity;
import io.quarkus.vertx.http.runtime.RouteConstants;
import io.quarkus.vertx.http.runtime.security.HttpSecurityPolicy;
import io.smallrye.mutiny.Uni;
import io.vertx.ext.web.RoutingContext;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link ReplayRoute} answers in front of the HTTP filters, the authorization filter among them; an installation that
 * configures path policies gets it after them instead. Here a policy lets only {@code transfers.admin} post transfers:
 * a writer's token, verified and cached by its first request, is refused on every later request too, first uses and
 * a retry of a transfer that exists, which the route would have answered.
 */
@QuarkusTest
@TestProfile(PathPolicyOrderTest.AdminsPostTransfers.class)
class PathPolicyOrderTest {

    public static class AdminsPostTransfers implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "quarkus.http.auth.permission.posting.paths", "/v1/transfers",
                    "quarkus.http.auth.permission.posting.methods", "POST",
                    "quarkus.http.auth.permission.posting.policy", "admins",
                    "quarkus.http.auth.policy.admins.roles-allowed", "transfers.admin");
        }
    }

    @Inject
    ReplayRoute route;

    @Test
    void aPathPolicyDecidesEveryPostTheRouteCouldHaveAnswered() {
        assertEquals(RouteConstants.ROUTE_ORDER_BEFORE_DEFAULT, route.installedAt(), "after the filters");
        String subject = "policy-" + UUID.randomUUID();
        String writer = Api.writer(subject);
        String admin = Api.token(subject, List.of("transfers.write", "transfers.admin"));

        // the first request verifies the token (and the cache keeps it), the others would find it there
        for (int i = 0; i < 3; i++) {
            Api.post(writer, Api.newKey(), Api.body(4_200 + i)).then().statusCode(403);
        }
        String key = Api.newKey();
        String body = Api.body(4_210);
        Api.post(admin, key, body).then().statusCode(201);
        // a retry of a transfer that exists, with the same bytes: still the policy's
        Api.post(writer, key, body).then().statusCode(403);
        Api.post(admin, key, body).then().statusCode(201).header("Idempotent-Replayed", "true");
    }

    @Test
    void theRouteRunsBeforeTheFiltersUnlessPoliciesApplyOrMayBeConfigured() {
        List<String> others = List.of("quarkus.http.cors.enabled", "quarkus.http.auth.proactive", "QUARKUS_HTTP_PORT");
        assertEquals(ReplayRoute.EARLY, ReplayRoute.order(false, others));
        assertEquals(RouteConstants.ROUTE_ORDER_BEFORE_DEFAULT, ReplayRoute.order(true, others), "policies applied");
        for (String name : List.of("quarkus.http.auth.permission.posting.paths", "%prod.quarkus.http.auth.permission.p.policy",
                "QUARKUS_HTTP_AUTH_PERMISSION_POSTING_PATHS", "_PROD_QUARKUS_HTTP_AUTH_PERMISSION_P_POLICY")) {
            assertEquals(RouteConstants.ROUTE_ORDER_BEFORE_DEFAULT, ReplayRoute.order(false, List.of("quarkus.http.cors.enabled", name)), name);
        }
        // a policy bean without a name applies to every request; a named one only through a path
        assertTrue(ReplayRoute.applied(List.of(policy(null))));
        assertFalse(ReplayRoute.applied(List.of(policy("ops-only"))));
        assertFalse(ReplayRoute.applied(List.of()));
    }

    private static HttpSecurityPolicy policy(String name) {
        return new HttpSecurityPolicy() {
            @Override
            public Uni<CheckResult> checkPermission(RoutingContext request, Uni<SecurityIdentity> identity,
                                                    AuthorizationRequestContext context) {
                return Uni.createFrom().item(CheckResult.PERMIT);
            }

            @Override
            public String name() {
                return name;
            }
        };
    }
}
