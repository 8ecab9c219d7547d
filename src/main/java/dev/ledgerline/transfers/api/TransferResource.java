package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.transfers.service.TransferService;
import dev.ledgerline.transfers.service.TransferService.Caller;
import dev.ledgerline.transfers.transfer.Transfer;
import io.quarkus.security.UnauthorizedException;
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
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Request;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.jwt.JsonWebToken;

import java.time.Duration;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * {@code /v1/transfers}: create a transfer under an Idempotency-Key, read it, read its history. Maps HTTP
 * (headers, validators, status codes) onto {@link TransferService}, which admits, accepts, dispatches and scopes.
 * Everything runs on the event loop.
 */
@Path("/v1/transfers")
@Produces(MediaType.APPLICATION_JSON)
public class TransferResource {

    static final String WRITE = "transfers.write";
    static final String READ = "transfers.read";
    static final String READ_ALL = "transfers.read.all";

    private final TransferService transfers;
    private final Submissions submissions;
    private final JsonWebToken jwt;
    private final LedgerlineConfig.Transfers limits;

    public TransferResource(TransferService transfers, Submissions submissions, JsonWebToken jwt, LedgerlineConfig config) {
        this.transfers = transfers;
        this.submissions = submissions;
        this.jwt = jwt;
        this.limits = config.transfers();
    }

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @RolesAllowed(WRITE)
    public Uni<Response> create(@HeaderParam("Idempotency-Key") String idempotencyKey, @HeaderParam("Prefer") String prefer,
                                HttpServerRequest http, byte[] body) {
        Optional<Duration> wait = Prefer.waitFor(prefer, limits.maxWaitSeconds());
        return transfers.create(caller().principal(), () -> submissions.read(http, idempotencyKey, body), wait)
                .map(TransferResponses::created);
    }

    @GET
    @Path("/{id}")
    @RolesAllowed({READ, READ_ALL})
    public Uni<Response> get(@PathParam("id") String id, @HeaderParam("If-None-Match") String ifNoneMatch,
                             @HeaderParam("Prefer") String prefer, @Context Request request) {
        Caller caller = caller();
        return transfers.find(caller, id).flatMap(t -> {
            Optional<Duration> wait = Prefer.waitFor(prefer, limits.maxWaitSeconds());
            if (wait.isEmpty()) {
                return Uni.createFrom().item(TransferResponses.current(t, request, null));
            }
            // with a validator: until the transfer differs from it; without: until it is final
            Predicate<Transfer> done = ifNoneMatch != null ? x -> !TransferResponses.unchanged(request, x) : x -> x.status().isTerminal();
            return transfers.await(caller, t, done, wait.get()).map(latest -> TransferResponses.current(latest, request, wait.get()));
        });
    }

    /** For operations: transfers in a status, unchanged for a while — e.g. stuck in reconciling — oldest first. */
    @GET
    @RolesAllowed(READ_ALL)
    public Uni<TransferPage> list(@QueryParam("status") String status, @QueryParam("olderThan") String olderThan,
                                  @QueryParam("limit") String limit, @QueryParam("after") String after) {
        return transfers.admitRead(caller().principal()).chain(() -> {
            ListQuery q = ListQuery.parse(status, olderThan, limit, after, limits.maxPageSize());
            return transfers.page(q.status(), q.olderThan(), q.afterUpdatedAt(), q.afterId(), q.limit())
                    .map(TransferPage::of);
        });
    }

    @GET
    @Path("/{id}/events")
    @RolesAllowed({READ, READ_ALL})
    public Uni<TransferEventsView> events(@PathParam("id") String id) {
        return transfers.history(caller(), id).map(h -> TransferEventsView.of(h.transfer().id(), h.events()));
    }

    private Caller caller() {
        String subject = jwt.getSubject();
        if (subject == null || subject.isBlank()) {
            throw new UnauthorizedException("token without subject");
        }
        return new Caller(subject, jwt.getGroups() != null && jwt.getGroups().contains(READ_ALL));
    }
}
