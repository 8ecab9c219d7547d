package dev.ledgerline.transfers.security;

import jakarta.json.JsonArray;
import jakarta.json.JsonObject;
import jakarta.json.JsonString;
import org.eclipse.microprofile.jwt.JsonWebToken;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Where a token's groups come from: the top-level {@code groups} claim, or the claim that
 * {@code smallrye.jwt.path.groups} names (Keycloak's {@code realm_access/roles}, or a namespaced claim in double
 * quotes such as {@code "https://example.com/roles"}). With a path configured, that claim is the only source: smallrye-jwt
 * reads the path, but where the token lacks it, it leaves the token's own {@code groups} claim standing, so a token
 * without the configured roles would still be authorised by a claim the operator chose not to trust.
 * {@link #enforce} takes the groups away from such a token.
 */
final class GroupsClaim {

    private final List<String> path;

    private GroupsClaim(List<String> path) {
        this.path = path;
    }

    /** The source that {@code smallrye.jwt.path.groups} configures; empty: the standard {@code groups} claim. */
    static GroupsClaim of(Optional<String> configuredPath) {
        return new GroupsClaim(configuredPath.map(GroupsClaim::segments).orElse(List.of()));
    }

    /** The token as verified, or, when a path is configured and the token lacks it, the token without groups. */
    JsonWebToken enforce(JsonWebToken token) {
        if (path.isEmpty() || present(token)) {
            return token;
        }
        return new WithoutGroups(token);
    }

    private boolean present(JsonWebToken token) {
        Object value = token.getClaim(path.get(0));
        for (String segment : path.subList(1, path.size())) {
            if (!(value instanceof JsonObject object)) {
                return false;
            }
            value = object.get(segment);
        }
        return value instanceof JsonArray || value instanceof JsonString || value instanceof String
                || value instanceof Collection<?>;
    }

    /** The path split at each {@code /} outside double quotes, quotes removed: smallrye-jwt's own reading of it. */
    static List<String> segments(String path) {
        List<String> segments = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        boolean quoted = false;
        for (char c : path.toCharArray()) {
            if (c == '"') {
                quoted = !quoted;
            } else if (c == '/' && !quoted) {
                segments.add(current.toString());
                current.setLength(0);
            } else {
                current.append(c);
            }
        }
        segments.add(current.toString());
        return List.copyOf(segments);
    }

    /** A verified token whose configured roles claim is absent: every claim as issued, and no group at all. */
    private record WithoutGroups(JsonWebToken token) implements JsonWebToken {

        @Override
        public String getName() {
            return token.getName();
        }

        @Override
        public Set<String> getClaimNames() {
            Set<String> names = new HashSet<>(token.getClaimNames());
            names.remove("groups");
            return names;
        }

        @Override
        @SuppressWarnings("unchecked")
        public <T> T getClaim(String claimName) {
            return "groups".equals(claimName) ? null : (T) token.getClaim(claimName);
        }

        @Override
        public Set<String> getGroups() {
            return Set.of();
        }
    }
}
