package dev.ledgerline.transfers.api;

import io.quarkus.security.UnauthorizedException;
import org.eclipse.microprofile.jwt.JsonWebToken;

/** The caller every resource acts for: the verified token's subject. */
final class Principals {

    private Principals() {
    }

    /** The token's subject; 401 for a token without one (the groups alone name nobody to act for). */
    static String of(JsonWebToken jwt) {
        String subject = jwt.getSubject();
        if (subject == null || subject.isBlank()) {
            throw new UnauthorizedException("token without subject");
        }
        return subject;
    }
}
