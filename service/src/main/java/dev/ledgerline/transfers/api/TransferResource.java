package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.transfers.service.TransferService;
import dev.ledgerline.transfers.service.TransferService.Caller;
import dev.ledgerline.transfers.transfer.Transfer;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.RoutingContext;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Request;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;
import org.eclipse.microprofile.jwt.JsonWebToken;

import java.time.Duration;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * {@code /v1/transfers}: create a transfer under an Idempotency-Key, read it, read its history, cancel it, find it by
 * key, list transfers for operations; {@code /v1/me/transfers}: the caller's own, newest first. Maps HTTP (headers,
 * validators, status codes) onto {@link TransferService}, which admits, accepts, dispatches and scopes. Everything
 * runs on the event loop.
 */
@Path("/v1")
@Produces(MediaType.APPLICATION_JSON)
public class TransferResource {

    static final String WRITE = "transfers.write";
    static final String READ = "transfers.read";
    static final String READ_ALL = "transfers.read.all";

    private final TransferService transfers;
    private final Submissions submissions;
    private final JsonWebToken jwt;
    private final int maxWaitSeconds;
    private final int maxPageSize;

    public TransferResource(TransferService transfers, Submissions submissions, JsonWebToken jwt, LedgerlineConfig config) {
        this.transfers = transfers;
        this.submissions = submissions;
        this.jwt = jwt;
        this.maxWaitSeconds = config.longPoll().maxWaitSeconds();
        this.maxPageSize = config.http().maxPageSize();
    }

    @POST
    @Path("/transfers")
    @Consumes(MediaType.APPLICATION_JSON)
    @RolesAllowed(WRITE)
    public Uni<Response> create(@HeaderParam("Idempotency-Key") String idempotencyKey, @HeaderParam("Prefer") String prefer,
                                HttpServerRequest http, RoutingContext rc, byte[] body) {
        Throwable decided = rc.get(ReplayRoute.DECIDED_FAILURE);
        if (decided != null) {
            // the replay route decided this request already and it failed: answered here, as a problem
            return Uni.createFrom().failure(decided);
        }
        Optional<Duration> wait = Prefer.waitFor(prefer, maxWaitSeconds);
        TransferService.EntryRead read = rc.get(ReplayRoute.ENTRY_READ);
        return transfers.create(caller().principal(), () -> submissions.key(http, idempotencyKey), submissions.body(http, body),
                        wait, read)
                .map(TransferResponses::created);
    }

    @GET
    @Path("/transfers/{id}")
    @RolesAllowed({READ, READ_ALL})
    public Uni<Response> get(@PathParam("id") String id, @HeaderParam("If-None-Match") String ifNoneMatch,
                             @HeaderParam("Prefer") String prefer, @Context Request request) {
        Caller caller = caller();
        return transfers.find(caller, id).flatMap(t -> {
            Optional<Duration> wait = Prefer.waitFor(prefer, maxWaitSeconds);
            if (wait.isEmpty()) {
                return Uni.createFrom().item(TransferResponses.current(t, request, null));
            }
            // with a validator: until the transfer differs from it; without: until it is final
            Predicate<Transfer> done = ifNoneMatch != null ? x -> !TransferResponses.unchanged(request, x) : x -> x.status().isTerminal();
            return transfers.await(caller, t, done, wait.get()).map(latest -> TransferResponses.current(latest, request, wait.get()));
        });
    }

    /** The owner's cancel of a transfer nobody has claimed yet: 200 with the cancelled transfer, else a problem. */
    @POST
    @Path("/transfers/{id}/cancel")
    @RolesAllowed(WRITE)
    public Uni<Response> cancel(@PathParam("id") String id) {
        return transfers.cancel(caller().principal(), id).map(TransferResponses::cancelled);
    }

    /**
     * Two reads of the collection. With {@code idempotencyKey}: the caller's own transfer created under that key, as
     * a page of zero or one (any reading group; a key names an intent of the caller, never of someone else). Without:
     * the operations listing, transfers in a status, unchanged for a while — e.g. stuck in reconciling — oldest change
     * first, for {@code transfers.read.all} only. A caller's own listing is {@link #listOwn}.
     */
    @GET
    @Path("/transfers")
    @RolesAllowed({READ, READ_ALL})
    public Uni<TransferPage> list(@QueryParam("status") String status, @QueryParam("olderThan") String olderThan,
                                  @QueryParam("limit") String limit, @QueryParam("after") String after,
                                  @QueryParam("idempotencyKey") String idempotencyKey, @Context UriInfo uri) {
        Caller caller = caller();
        // an empty ?idempotencyKey= reaches us as null: it is a lookup of an invalid key, not the operations listing
        if (idempotencyKey != null || uri.getQueryParameters().containsKey("idempotencyKey")) {
            String key = idempotencyKey == null ? "" : idempotencyKey;
            return transfers.admitRead(caller.principal())
                    .chain(() -> transfers.findByKey(caller, ListQuery.key(key, status, olderThan, limit, after)))
                    .map(page -> TransferPage.of(page, PageCursor::byUpdate));
        }
        return transfers.admitListingOfAll(caller).chain(() -> {
            ListQuery q = ListQuery.parse(status, olderThan, limit, after, maxPageSize);
            return transfers.page(q.status(), q.olderThan(), q.after().at(), q.after().id(), q.limit());
        }).map(page -> TransferPage.of(page, PageCursor::byUpdate));
    }

    /**
     * The caller's own transfers, newest first, keyset-paged. A path of its own rather than {@code GET /v1/transfers}
     * answering differently by scope: one path, one meaning, whatever groups the token carries (openapi.yaml
     * {@code listMyTransfers}, docs/http.md). Scoped to the token's subject even for {@code transfers.read.all}.
     */
    @GET
    @Path("/me/transfers")
    @RolesAllowed({READ, READ_ALL})
    public Uni<TransferPage> listOwn(@QueryParam("status") String status, @QueryParam("limit") String limit,
                                     @QueryParam("after") String after) {
        Caller caller = caller();
        return transfers.admitRead(caller.principal()).chain(() -> {
            OwnListQuery q = OwnListQuery.parse(status, limit, after, maxPageSize);
            return transfers.ownPage(caller, q.status(), q.after().at(), q.after().id(), q.limit());
        }).map(page -> TransferPage.of(page, PageCursor::byCreation));
    }

    @GET
    @Path("/transfers/{id}/events")
    @RolesAllowed({READ, READ_ALL})
    public Uni<TransferEventsView> events(@PathParam("id") String id) {
        return transfers.history(caller(), id).map(h -> TransferEventsView.of(h.transfer().id(), h.events()));
    }

    /** The token's principal and whether it reads every principal's transfers; 401 for a token without subject. */
    private Caller caller() {
        return new Caller(Principals.of(jwt), jwt.getGroups() != null && jwt.getGroups().contains(READ_ALL));
    }
}
