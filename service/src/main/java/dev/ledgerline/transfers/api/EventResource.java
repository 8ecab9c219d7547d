package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.transfers.events.EventFeed;
import dev.ledgerline.transfers.events.FeedCursor;
import dev.ledgerline.transfers.problem.Problem;
import dev.ledgerline.transfers.problem.ProblemException;
import dev.ledgerline.transfers.problem.ProblemType;
import dev.ledgerline.transfers.service.TransferService;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.jwt.JsonWebToken;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@code GET /v1/events}: every transition of every transfer, once, in an order that never puts an event behind a
 * cursor already handed out ({@link EventFeed}). For internal services (scope {@code transfers.read.all}).
 */
@Path("/v1/events")
@Produces(MediaType.APPLICATION_JSON)
public class EventResource {

    static final int DEFAULT_LIMIT = 100;
    static final int MAX_LIMIT = 1000;

    private final EventFeed feed;
    private final TransferService transfers;
    private final JsonWebToken jwt;
    private final LedgerlineConfig.LongPoll longPoll;

    public EventResource(EventFeed feed, TransferService transfers, JsonWebToken jwt, LedgerlineConfig config) {
        this.feed = feed;
        this.transfers = transfers;
        this.jwt = jwt;
        this.longPoll = config.longPoll();
    }

    @GET
    @RolesAllowed(TransferResource.READ_ALL)
    public Uni<Response> list(@QueryParam("after") String after, @QueryParam("limit") String limit,
                               @HeaderParam("Prefer") String prefer) {
        String principal = Principals.of(jwt);
        List<Problem.FieldError> errors = new ArrayList<>();
        int n = ListQuery.limit(limit, DEFAULT_LIMIT, MAX_LIMIT, errors);
        FeedCursor cursor = null;
        if (after != null) {
            try {
                cursor = FeedCursor.decode(after);
            } catch (IllegalArgumentException e) {
                errors.add(new Problem.FieldError("after", "must be a nextCursor from a previous page"));
            }
        }
        if (!errors.isEmpty()) {
            throw new ProblemException(ProblemType.VALIDATION_FAILED, "The feed parameters are not valid.", errors, Map.of());
        }
        Optional<Duration> wait = Prefer.waitFor(prefer, longPoll.maxWaitSeconds());
        FeedCursor from = cursor;
        int pageSize = n;
        return transfers.admitRead(principal)
                .chain(() -> feed.read(principal, from, pageSize, wait.orElse(Duration.ZERO)))
                .map(page -> {
                    Response.ResponseBuilder answer = Response.ok(EventPage.of(page));
                    wait.ifPresent(w -> answer.header("Preference-Applied", Prefer.applied(w)));
                    return answer.build();
                });
    }
}
