package dev.ledgerline.transfers.security;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** A groups path is read as smallrye-jwt reads it: split at each {@code /} outside double quotes, quotes removed. */
class GroupsClaimTest {

    @Test
    void aKeycloakPathIsAClaimInsideAClaim() {
        assertEquals(List.of("realm_access", "roles"), GroupsClaim.segments("realm_access/roles"));
    }

    @Test
    void aQuotedNamespacedClaimIsOneClaim() {
        assertEquals(List.of("https://example.com/roles"), GroupsClaim.segments("\"https://example.com/roles\""));
    }

    @Test
    void aPlainNameIsOneClaim() {
        assertEquals(List.of("roles"), GroupsClaim.segments("roles"));
    }
}
