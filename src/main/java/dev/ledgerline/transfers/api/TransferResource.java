package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.transfers.idempotency.IdempotencyKey;
import dev.ledgerline.transfers.idempotency.IdempotencyService;
import dev.ledgerline.transfers.pipeline.Backlog;
import dev.ledgerline.transfers.pipeline.Dispatcher;
import dev.ledgerline.transfers.ratelimit.RateLimiter;
import dev.ledgerline.transfers.transfer.Transfer;
import dev.ledgerline.transfers.transfer.TransferChanges;
import dev.ledgerline.transfers.transfer.TransferRepository;
import io.micrometer.core.instrument.MeterRegistry;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpServerRequest;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.jwt.JsonWebToken;

import java.util.regex.Pattern;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Predicate;

/**
 * {@code /v1/transfers}: create a transfer under an Idempotency-Key, read it, read its history.
 * Everything runs on the event loop; every answer about a transfer is scoped to the caller, and
 * another principal's transfer is indistinguishable from a missing one (404).
 */
@Path("/v1/transfers")
@Produces(MediaType.APPLICATION_JSON)
public class TransferResource {

    static final String WRITE = "transfers.write";
    static final String READ = "transfers.read";
    static final String READ_ALL = "transfers.read.all";

    private static final Pattern CANONICAL_UUID = Pattern.compile("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");

    private final TransferChanges changes;
    private final LedgerlineConfig.Transfers limits;
    private final IdempotencyService idempotency;
    private final TransferRequestParser parser;
    private final TransferRepository transfers;
    private final Dispatcher dispatcher;
    private final JsonWebToken jwt;
    private final MeterRegistry metrics;
    private final RateLimiter limiter;
    private final HeldPolls polls;
    private final Backlog backlog;
    private final LedgerlineConfig.Overload overload;

    public TransferResource(IdempotencyService idempotency, TransferRequestParser parser, TransferRepository transfers,
                            Dispatcher dispatcher, JsonWebToken jwt, MeterRegistry metrics, TransferChanges changes,
                            LedgerlineConfig config, RateLimiter limiter, HeldPolls polls, Backlog backlog) {
        this.backlog = backlog;
        this.overload = config.overload();
        this.limiter = limiter;
        this.polls = polls;
        this.changes = changes;
        this.limits = config.transfers();
        this.idempotency = idempotency;
        this.parser = parser;
        this.transfers = transfers;
        this.dispatcher = dispatcher;
        this.jwt = jwt;
        this.metrics = metrics;
    }

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @RolesAllowed(WRITE)
    public Uni<Response> create(@HeaderParam("Idempotency-Key") String idempotencyKey, @HeaderParam("Prefer") String prefer,
                                HttpServerRequest http, byte[] body) {
        String principal = principal();
        if (backlog.overloaded()) {
            // before the rate limiter and anything else that costs a round trip: a refusal must stay cheap
            outcome("overloaded");
            String retryAfter = Integer.toString(overload.retryAfterSeconds());
            throw new ProblemException(ProblemType.SERVICE_UNAVAILABLE,
                    "The service is behind on transfers it already accepted and takes no new ones for now; retry after "
                            + retryAfter + " s with the same Idempotency-Key.", null, java.util.Map.of("Retry-After", retryAfter));
        }
        // first, before the body is even parsed: a flood of invalid requests costs its sender tokens too
        return limiter.admit(principal, RateLimiter.Kind.WRITE)
                .onFailure().invoke(e -> outcome("rate_limited"))
                .chain(() -> accept(principal, idempotencyKey, http, prefer, body));
    }

    private Uni<Response> accept(String principal, String idempotencyKey, HttpServerRequest http, String prefer, byte[] body) {
        IdempotencyKey key;
        TransferRequest request;
        try {
            key = IdempotencyKey.parse(single(http, "Idempotency-Key", idempotencyKey));
            // the route's @Consumes already matched this Content-Type, so it parses
            String contentType = http.getHeader("Content-Type");
            String charset = contentType == null ? null : MediaType.valueOf(contentType).getParameters().get("charset");
            request = parser.parse(body, charset);
        } catch (ProblemException e) {
            outcome("rejected");
            throw e;
        }
        return idempotency.accept(principal, key, request)
                .invoke(accepted -> {
                    if (!accepted.replayed()) {
                        Transfer created = accepted.transfer();
                        dispatcher.dispatchAccepted(new TransferRepository.Seen(created.id(), created.status(), created.version()),
                                "dispatched on accept");
                    }
                    outcome(accepted.replayed() ? "replayed" : "created");
                })
                .onFailure(ProblemException.class).invoke(e -> outcome(switch (((ProblemException) e).type()) {
                    case IDEMPOTENCY_KEY_IN_USE -> "conflict";
                    case IDEMPOTENCY_KEY_REUSED -> "mismatch";
                    default -> "rejected";
                }))
                .flatMap(accepted -> {
                    Optional<Duration> wait = Prefer.waitFor(prefer, limits.maxWaitSeconds());
                    // beyond the principal's share of held polls the transfer exists already: answer without waiting
                    if (wait.isEmpty() || !polls.tryHold(principal)) {
                        return Uni.createFrom().item(created(accepted, accepted.transfer(), null));
                    }
                    return waitUntil(accepted.transfer(), t -> t.status().isTerminal(), deadline(wait.get()))
                            .onTermination().invoke(() -> polls.release(principal))
                            .map(latest -> created(accepted, latest, wait.get()));
                });
    }

    /**
     * The one value of a header that must not repeat: a second {@code Idempotency-Key} would otherwise be
     * dropped silently, and the client could not know which of its two keys guards the transfer.
     */
    private static String single(HttpServerRequest http, String name, String first) {
        int count = http.headers().getAll(name).size();
        if (count > 1) {
            throw new ProblemException(ProblemType.IDEMPOTENCY_KEY_INVALID,
                    "Send exactly one " + name + " header; this request has " + count + ".");
        }
        return first;
    }

    private static Response created(IdempotencyService.Accepted accepted, Transfer t, Duration waited) {
                    // relative on purpose (RFC 9110 §10.2.2): an absolute one would echo whatever Host the client sent
                    Response.ResponseBuilder response = Response.status(Response.Status.CREATED)
                            .header("Location", "/v1/transfers/" + t.id())
                            .entity(TransferView.of(t))
                            .tag(new jakarta.ws.rs.core.EntityTag(Long.toString(t.version())));
                    if (accepted.replayed()) {
                        response.header("Idempotent-Replayed", "true");
                    }
                    if (waited != null) {
                        response.header("Preference-Applied", Prefer.applied(waited));
                    }
                    return response.build();
    }

    @GET
    @Path("/{id}")
    @RolesAllowed({READ, READ_ALL})
    public Uni<Response> get(@PathParam("id") String id, @HeaderParam("If-None-Match") String ifNoneMatch,
                             @HeaderParam("Prefer") String prefer) {
        return admitRead().chain(() -> visible(id)).flatMap(t -> {
            Optional<Duration> wait = Prefer.waitFor(prefer, limits.maxWaitSeconds());
            if (wait.isEmpty()) {
                return Uni.createFrom().item(current(t, ifNoneMatch, null));
            }
            // with a validator: until the transfer differs from it; without: until it is final
            Predicate<Transfer> done = ifNoneMatch != null
                    ? x -> !matches(ifNoneMatch, TransferView.etag(x))
                    : x -> x.status().isTerminal();
            String principal = principal();
            if (!polls.tryHold(principal)) {
                throw new ProblemException(ProblemType.RATE_LIMITED,
                        "You already hold " + limits.maxWaitingPerPrincipal() + " waiting requests; retry when one has been answered.",
                        null, java.util.Map.of("Retry-After", "1"));
            }
            return waitUntil(t, done, deadline(wait.get()))
                    .onTermination().invoke(() -> polls.release(principal))
                    .map(latest -> current(latest, ifNoneMatch, wait.get()));
        });
    }

    private static Response current(Transfer t, String ifNoneMatch, Duration waited) {
        String etag = TransferView.etag(t);
        Response.ResponseBuilder response = matches(ifNoneMatch, etag)
                ? Response.notModified()
                : Response.ok(TransferView.of(t));
        response.header("ETag", etag);
        if (waited != null) {
            response.header("Preference-Applied", Prefer.applied(waited));
        }
        return response.build();
    }

    /**
     * Holds the request until {@code done} holds or the deadline passes, woken by the database's change
     * announcements (any instance's change) rather than by polling; answers with the latest row.
     */
    private Uni<Transfer> waitUntil(Transfer t, Predicate<Transfer> done, long deadline) {
        long remaining = deadline - System.nanoTime();
        if (done.test(t) || remaining <= 0) {
            return Uni.createFrom().item(t);
        }
        // subscribe to announcements first, then look once more: a change between the first read and
        // the subscription is seen by the second read instead of being missed
        Uni<Wake> announced = changes.next(t.id(), t.version()).map(v -> v == null ? Wake.NO_ROOM : Wake.CHANGED);
        Uni<Wake> movedMeanwhile = transfers.findById(t.id())
                .flatMap(x -> x != null && x.version() != t.version()
                        ? Uni.createFrom().item(Wake.CHANGED)
                        : Uni.createFrom().<Wake>nothing());
        return Uni.join().first(announced, movedMeanwhile).withItem()
                .ifNoItem().after(Duration.ofNanos(remaining)).recoverWithItem(Wake.DEADLINE)
                .flatMap(wake -> transfers.findById(t.id()).flatMap(latest -> {
                    if (latest == null) {
                        return Uni.createFrom().item(t);
                    }
                    return wake == Wake.CHANGED ? waitUntil(latest, done, deadline) : Uni.createFrom().item(latest);
                }));
    }

    private enum Wake { CHANGED, DEADLINE, NO_ROOM }

    private static long deadline(Duration wait) {
        return System.nanoTime() + wait.toNanos();
    }

    /** For operations: transfers in a status, unchanged for a while — e.g. stuck in reconciling — oldest first. */
    @GET
    @RolesAllowed(READ_ALL)
    public Uni<TransferPage> list(@QueryParam("status") String status, @QueryParam("olderThan") String olderThan,
                                  @QueryParam("limit") String limit, @QueryParam("after") String after) {
        return admitRead().chain(() -> page(status, olderThan, limit, after));
    }

    private Uni<TransferPage> page(String status, String olderThan, String limit, String after) {
        ListQuery query = ListQuery.parse(status, olderThan, limit, after, limits.maxPageSize());
        return transfers.list(query.status(), query.olderThan(), query.afterUpdatedAt(), query.afterId(), query.limit() + 1)
                .map(rows -> {
                    boolean more = rows.size() > query.limit();
                    var page = more ? rows.subList(0, query.limit()) : rows;
                    String next = more ? ListQuery.cursor(page.get(page.size() - 1)) : null;
                    return new TransferPage(page.stream().map(TransferView::of).toList(), next);
                });
    }

    @GET
    @Path("/{id}/events")
    @RolesAllowed({READ, READ_ALL})
    public Uni<TransferEventsView> events(@PathParam("id") String id) {
        return admitRead().chain(() -> visible(id)).flatMap(t -> transfers.events(t.id()).map(events -> TransferEventsView.of(t.id(), events)));
    }

    private Uni<Void> admitRead() {
        return limiter.admit(principal(), RateLimiter.Kind.READ);
    }

    /** The caller's transfer, or 404 — also for another principal's transfer and for ids that are not UUIDs. */
    private Uni<Transfer> visible(String rawId) {
        if (!CANONICAL_UUID.matcher(rawId).matches()) {
            return Uni.createFrom().failure(notFound());
        }
        UUID id = UUID.fromString(rawId);
        String principal = principal();
        boolean readsAll = jwt.getGroups() != null && jwt.getGroups().contains(READ_ALL);
        return transfers.findById(id)
                .onItem().ifNull().failWith(TransferResource::notFound)
                .invoke(t -> {
                    if (!readsAll && !t.userId().equals(principal)) {
                        throw notFound();
                    }
                });
    }

    private String principal() {
        String subject = jwt.getSubject();
        if (subject == null || subject.isBlank()) {
            throw new io.quarkus.security.UnauthorizedException("token without subject");
        }
        return subject;
    }

    private static boolean matches(String ifNoneMatch, String etag) {
        if (ifNoneMatch == null) {
            return false;
        }
        for (String candidate : ifNoneMatch.split(",")) {
            String c = candidate.trim();
            if (c.equals("*") || c.equals(etag) || c.equals("W/" + etag)) {
                return true;
            }
        }
        return false;
    }

    private static ProblemException notFound() {
        return new ProblemException(ProblemType.NOT_FOUND, "No transfer with this id is visible to you.");
    }

    private void outcome(String outcome) {
        metrics.counter("ledgerline.transfers.requests", "outcome", outcome).increment();
    }
}
