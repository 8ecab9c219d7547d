package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.transfers.idempotency.IdempotencyKey;
import dev.ledgerline.transfers.idempotency.SubmittedBody;
import dev.ledgerline.transfers.metrics.Meters;
import dev.ledgerline.transfers.metrics.ServiceMeters;
import dev.ledgerline.transfers.security.CachingJwtParser;
import dev.ledgerline.transfers.service.TransferService;
import dev.ledgerline.transfers.service.TransferService.Created;
import dev.ledgerline.transfers.service.TransferService.EntryRead;
import dev.ledgerline.transfers.transfer.Transfer;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.vertx.http.runtime.RouteConstants;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpVersion;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.impl.RoutingContextInternal;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Instance;
import io.quarkus.vertx.http.runtime.security.AbstractPathMatchingHttpSecurityPolicy;
import io.quarkus.vertx.http.runtime.security.HttpSecurityPolicy;
import org.eclipse.microprofile.config.ConfigProvider;
import org.jboss.logging.Logger;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * Answers the two common kinds of {@code POST /v1/transfers} before the request reaches Quarkus REST: a replay that its
 * idempotency entry answers as kept (the request a retrying client sends most, whose answer is bytes already kept in
 * Redis) and the first use of a key. Quarkus REST's handler chain and the HTTP authentication around it cost several
 * times what such a replay does itself, and a sixth or so of a new transfer's CPU (bench/CPU-AB.md), so this handler
 * runs in front of them and takes only the requests it can decide exactly as they would, leaving every other one to
 * them untouched:
 *
 * <ul>
 *   <li>HTTP/1.x (an HTTP/2 request, once its body is read, cannot be handed on to Quarkus REST);</li>
 *   <li>no {@code Origin}: a browser's request is a CORS request, which Quarkus' CORS filter answers;</li>
 *   <li>one {@code Authorization: Bearer} token that {@link CachingJwtParser} verified in full a moment ago and still
 *   trusts, with a subject and the {@code transfers.write} group: what {@code @RolesAllowed} would let through. A
 *   token the cache does not hold, or any other credential, goes to the HTTP authentication, which verifies it (and
 *   caches it for the next replay);</li>
 *   <li>one valid {@code Idempotency-Key}, {@code Content-Type: application/json} (UTF-8), a {@code Content-Length}
 *   within the body limit, no {@code Prefer}, no {@code Expect}, and an {@code Accept} that JSON satisfies plainly
 *   (absent, {@code application/json} or {@code *}{@code /*});</li>
 *   <li>after one {@code GET} of the key's entry: no entry at all (a first use), or a final entry of the principal's
 *   that keeps exactly this body under this build's stamp ({@link TransferService#answersAsKept}).</li>
 * </ul>
 *
 * <p>Such a request is then decided by {@link TransferService#create} itself, the same call the resource makes (the
 * overload bound, the rate limit, the body's rules, the insert and the dispatch, the outcome counter, a replay's row
 * check), and answered with the resource's status, headers and bytes: the kept response, or the transfer's view. A
 * request that does not qualify after its body was read continues to the resource with its body and what the
 * {@code GET} found, so the entry is not read twice; a failure of the decision (a {@code 400}, {@code 409},
 * {@code 422}, {@code 429}, {@code 503}...) continues with the failure, which the resource answers as a problem
 * document, so every error keeps the one writer it has.
 *
 * <p>The route runs before the HTTP filters too, right after the body deadline ({@link SlowBodyGuard}) and the
 * methods' guard ({@link AllowedMethods}): for a request it answers they would do nothing (no {@code Origin} for the
 * CORS filter, authentication deferred to the resource, no path policy), yet they cost a replay about a tenth of its
 * CPU, most of it Quarkus REST's filter that builds a path matcher for every request to name the path of an
 * authentication failure in the metrics. A request it passes on goes through all of them as before. An installation
 * whose authorization filter applies a policy (path policies from {@code quarkus.http.auth.permission.*} in any config
 * source or from the programmatic {@code HttpSecurity}, or a policy bean without a name) gets the route after the
 * filters, so the policies decide every request ({@code PathPolicyOrderTest}).
 */
@ApplicationScoped
public class ReplayRoute {

    private static final Logger LOG = Logger.getLogger(ReplayRoute.class);

    /** What the entry's {@code GET} found ({@link EntryRead}), for the resource. */
    static final String ENTRY_READ = "ledgerline.entry-read";
    /** The decision's failure, for the resource to answer. */
    static final String DECIDED_FAILURE = "ledgerline.decided-failure";

    /** After {@link SlowBodyGuard} and {@link AllowedMethods}, before every filter (Quarkus orders a filter at minus its priority). */
    static final int EARLY = AllowedMethods.ORDER + 1;
    private static final String PATH_POLICIES = "quarkus.http.auth.permission.";
    private static final String PATH_POLICIES_ENV = "QUARKUS_HTTP_AUTH_PERMISSION_";
    private static final String BEARER = "Bearer ";
    private static final Set<String> JSON_UTF8 = Set.of("application/json", "application/json;charset=utf-8",
            "application/json; charset=utf-8", "application/json;charset=\"utf-8\"", "application/json; charset=\"utf-8\"");
    private static final Set<String> PLAIN_ACCEPT = Set.of("application/json", "*/*");
    // header names and values as Netty's ASCII strings, whose hash is computed once instead of on every look-up
    private static final CharSequence IDEMPOTENCY_KEY = HttpHeaders.createOptimized("Idempotency-Key");
    private static final CharSequence PREFER = HttpHeaders.createOptimized("Prefer");
    private static final CharSequence IDEMPOTENT_REPLAYED = HttpHeaders.createOptimized("Idempotent-Replayed");
    private static final CharSequence TRUE = HttpHeaders.createOptimized("true");
    private static final CharSequence JSON_CONTENT_TYPE = HttpHeaders.createOptimized("application/json;charset=UTF-8");

    private final TransferService transfers;
    private final Submissions submissions;
    private final CachingJwtParser tokens;
    private final long maxBodyBytes;
    private final Counter early;
    private final Counter createdEarly;
    private final ObjectMapper json;
    /** The HTTP security policies, which decide where the route goes ({@link #install}). */
    private final Instance<HttpSecurityPolicy> policies;
    private volatile int installedAt;

    public ReplayRoute(TransferService transfers, Submissions submissions, CachingJwtParser tokens, LedgerlineConfig config,
                       @ServiceMeters MeterRegistry metrics, ObjectMapper json, Instance<HttpSecurityPolicy> policies) {
        this.json = json;
        this.policies = policies;
        this.transfers = transfers;
        this.submissions = submissions;
        this.tokens = tokens;
        this.maxBodyBytes = config.http().maxBodyBytes();
        this.early = Meters.REPLAYS_EARLY.counter().register(metrics);
        this.createdEarly = Meters.CREATED_EARLY.counter().register(metrics);
    }

    void install(@Observes Router router) {
        installedAt = order(applied(policies), ConfigProvider.getConfig().getPropertyNames());
        router.route(HttpMethod.POST, "/v1/transfers").order(installedAt).handler(this::handle);
    }

    /** The route's order on the router: {@link #EARLY}, or after the filters when policies apply. */
    int installedAt() {
        return installedAt;
    }

    /**
     * Whether the authorization filter applies a policy to every request, as Quarkus's {@code HttpAuthorizer} picks
     * them: a policy bean without a name, except the path policies' own when no path is configured for it (config
     * {@code quarkus.http.auth.permission.*} from any source, or Quarkus's programmatic {@code HttpSecurity}). A named
     * policy applies only through such a path.
     */
    static boolean applied(Iterable<HttpSecurityPolicy> policies) {
        for (HttpSecurityPolicy policy : policies) {
            if (policy.name() != null) {
                continue;
            }
            if (policy instanceof AbstractPathMatchingHttpSecurityPolicy paths && paths.hasNoPermissions()) {
                continue;
            }
            return true;
        }
        return false;
    }

    /**
     * Before the HTTP filters ({@link #EARLY}), unless the authorization filter applies a policy: then after them,
     * before Quarkus REST's route, so that the policies decide first. {@code propertyNames}: every configured name, in
     * which a path policy's name in any profile or in the form of an environment variable counts too.
     */
    static int order(boolean policiesApplied, Iterable<String> propertyNames) {
        if (policiesApplied) {
            return RouteConstants.ROUTE_ORDER_BEFORE_DEFAULT;
        }
        for (String name : propertyNames) {
            if (name.contains(PATH_POLICIES) || name.toUpperCase(Locale.ROOT).contains(PATH_POLICIES_ENV)) {
                return RouteConstants.ROUTE_ORDER_BEFORE_DEFAULT;
            }
        }
        return EARLY;
    }

    private void handle(RoutingContext rc) {
        HttpServerRequest request = rc.request();
        // HTTP/1.x only: Quarkus REST pauses the request it is handed, which HTTP/2 refuses once the body was read
        String principal = request.version() == HttpVersion.HTTP_2 || request.headers().contains(HttpHeaders.ORIGIN) ? null
                : principal(request);
        IdempotencyKey key = principal == null ? null : plainRequestKey(request);
        if (key == null) {
            rc.next();
            return;
        }
        request.body().onComplete(read -> {
            if (read.failed()) {
                // the connection went away or the body broke a limit: the resource reads it and answers as it does
                LOG.debugf("step=replay-route the body could not be read: %s", read.cause());
                rc.fail(read.cause());
                return;
            }
            Buffer body = read.result();
            ((RoutingContextInternal) rc).setBody(body);
            byte[] bytes = body.getBytes();
            // the Content-Type is one of JSON_UTF8's, so its charset, if any, is UTF-8
            SubmittedBody submitted = submissions.utf8Body(bytes);
            transfers.readEntry(principal, key).subscribe().with(
                    entry -> decide(rc, principal, key, submitted, entry),
                    redisFailed -> rc.next());
        });
        // the HTTP server hands the request over paused; the resource would resume it to read the body, as this does
        request.resume();
    }

    private void decide(RoutingContext rc, String principal, IdempotencyKey key, SubmittedBody body, EntryRead entry) {
        rc.put(ENTRY_READ, entry);
        // a key with no entry (a first use) or a kept replay; any other entry (another request's marker, a transfer
        // still moving, another body) is left to the resource
        if (entry.value() != null && !transfers.answersAsKept(principal, body, entry)) {
            rc.next();
            return;
        }
        try {
            transfers.create(principal, () -> key, body, Optional.empty(), entry).subscribe().with(
                    created -> answer(rc, created),
                    failure -> {
                        rc.put(DECIDED_FAILURE, failure);
                        rc.next();
                    });
        } catch (RuntimeException refused) {
            rc.put(DECIDED_FAILURE, refused);
            rc.next();
        }
    }

    /** The resource's answer to a created transfer or a replay ({@link TransferResponses#created}), written here. */
    private void answer(RoutingContext rc, Created created) {
        Transfer t = created.transfer();
        byte[] response;
        try {
            // an entry that keeps the body under this stamp keeps the response too; the view is the resource's fallback
            response = created.response() != null ? created.response().getBytes(StandardCharsets.UTF_8)
                    : json.writeValueAsBytes(TransferView.of(t));
        } catch (JsonProcessingException e) {
            rc.fail(e);
            return;
        }
        var answer = rc.response().setStatusCode(201)
                .putHeader(HttpHeaders.CONTENT_TYPE, JSON_CONTENT_TYPE)
                .putHeader(HttpHeaders.LOCATION, "/v1/transfers/" + t.id())
                .putHeader(HttpHeaders.ETAG, "\"" + t.version() + "\"");
        if (created.replayed()) {
            early.increment();
            answer.putHeader(IDEMPOTENT_REPLAYED, TRUE);
        } else {
            createdEarly.increment();
        }
        answer.end(Buffer.buffer(response));
    }

    /** The subject of the one bearer token the cache vouches for, with the write group; else {@code null}. */
    private String principal(HttpServerRequest request) {
        List<String> authorization = request.headers().getAll(HttpHeaders.AUTHORIZATION);
        if (authorization.size() != 1 || !authorization.get(0).startsWith(BEARER)) {
            return null;
        }
        return tokens.subjectWithGroup(authorization.get(0).substring(BEARER.length()), TransferResource.WRITE);
    }

    /** The key of a request whose headers the resource would take without a question; else {@code null}. */
    private IdempotencyKey plainRequestKey(HttpServerRequest request) {
        var headers = request.headers();
        String contentType = headers.get(HttpHeaders.CONTENT_TYPE);
        String accept = headers.get(HttpHeaders.ACCEPT);
        String length = headers.get(HttpHeaders.CONTENT_LENGTH);
        List<String> keys = headers.getAll(IDEMPOTENCY_KEY);
        if (keys.size() != 1 || contentType == null || !JSON_UTF8.contains(contentType.toLowerCase(Locale.ROOT))
                || (accept != null && !PLAIN_ACCEPT.contains(accept.toLowerCase(Locale.ROOT)))
                || headers.contains(PREFER) || headers.contains(HttpHeaders.EXPECT)
                || headers.contains(HttpHeaders.TRANSFER_ENCODING) || length == null || !withinLimit(length)) {
            return null;
        }
        try {
            return IdempotencyKey.parse(keys.get(0));
        } catch (RuntimeException invalid) {
            return null;
        }
    }

    private boolean withinLimit(String length) {
        try {
            long n = Long.parseLong(length);
            return n > 0 && n <= maxBodyBytes;
        } catch (NumberFormatException e) {
            return false;
        }
    }
}
