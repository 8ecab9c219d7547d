package dev.ledgerline.transfers.security;

import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.transfers.config.StartupOrder;
import dev.ledgerline.transfers.metrics.Meters;
import dev.ledgerline.transfers.metrics.ServiceMeters;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import io.smallrye.jwt.auth.principal.DefaultJWTParser;
import io.smallrye.jwt.auth.principal.ParseException;
import jakarta.annotation.Priority;
import jakarta.inject.Singleton;
import jakarta.enterprise.inject.Alternative;
import jakarta.inject.Inject;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.jwt.JsonWebToken;

import java.util.Optional;

/**
 * The parser Quarkus uses to authenticate bearer tokens (smallrye-jwt's, unchanged), with
 * {@link VerifiedTokens} in front of it: a token seen and verified a moment ago is not verified again.
 * Only {@link #parse(String)} — the call the HTTP authentication makes — is cached; a failed
 * verification is never remembered.
 *
 * <p>A token is accepted only in its one canonical spelling: three segments of unpadded base64url whose
 * unused trailing bits are zero ({@link CanonicalToken}). Decoders forgive padding and stray low bits, so
 * without this one signed token had countless accepted spellings, each a cache miss of its own — a single
 * token holder could fill the cache and push every other client back to full verification.
 *
 * <p>Where {@code smallrye.jwt.path.groups} names the claim the identity provider puts roles in, a verified token's
 * groups come from that claim alone ({@link GroupsClaim}); a token without it has none.
 */
@Alternative
@Priority(1)
@Startup(StartupOrder.BEFORE_SCHEDULER)
@Singleton
public class CachingJwtParser extends DefaultJWTParser {

    private VerifiedTokens verified;
    private Counter hits;
    private Counter misses;
    private GroupsClaim groups;

    @Inject
    void configure(LedgerlineConfig config, @ServiceMeters MeterRegistry metrics,
            @ConfigProperty(name = "smallrye.jwt.path.groups") Optional<String> groupsPath) {
        this.groups = GroupsClaim.of(groupsPath);
        LedgerlineConfig.TokenCache settings = config.tokenCache();
        this.verified = new VerifiedTokens(settings.maxEntries(), settings.ttl().toMillis());
        this.hits = Meters.AUTH_TOKEN_CACHE.counter("hit").register(metrics);
        this.misses = Meters.AUTH_TOKEN_CACHE.counter("miss").register(metrics);
    }

    /**
     * The subject of a token that a full verification proved a moment ago and that is still trusted, when it has one
     * (not blank) and {@code group} among its groups, both read when the token was verified; else {@code null}: never
     * verifies. For a handler that answers only what the cache already vouches for and leaves every other request to
     * the HTTP authentication (the replay route, {@code ReplayRoute}).
     */
    public String subjectWithGroup(String token, String group) {
        String subject = verified.subjectWithGroup(token, group, System.currentTimeMillis());
        if (subject != null) {
            hits.increment();
        }
        return subject;
    }

    @Override
    public JsonWebToken parse(String token) throws ParseException {
        // the cache holds only tokens that were canonical and verified: a hit is this very spelling, checked then
        long now = System.currentTimeMillis();
        JsonWebToken known = verified.get(token, now);
        if (known != null) {
            hits.increment();
            return known;
        }
        if (!CanonicalToken.isCanonical(token)) {
            throw new ParseException("the token is not in canonical unpadded base64url");
        }
        misses.increment();
        JsonWebToken fresh = groups.enforce(super.parse(token));
        verified.put(token, fresh, now);
        return fresh;
    }
}
