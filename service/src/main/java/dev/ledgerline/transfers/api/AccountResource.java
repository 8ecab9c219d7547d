package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.transfers.idempotency.IdempotencyKey;
import dev.ledgerline.transfers.problem.Problem;
import dev.ledgerline.transfers.problem.ProblemException;
import dev.ledgerline.transfers.problem.ProblemType;
import dev.ledgerline.transfers.service.AccountService;
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

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code /v1/accounts}: the caller's balances and ledger entries, and the credits an internal service books to a
 * principal's account. Maps HTTP onto {@link AccountService}. Everything runs on the event loop.
 */
@Path("/v1/accounts")
@Produces(MediaType.APPLICATION_JSON)
public class AccountResource {

    static final String CREDIT = "accounts.credit";
    /** The longest principal a credit names: the length of a token's subject that the service keeps. */
    static final int MAX_PRINCIPAL_LENGTH = 255;
    private static final int DEFAULT_LIMIT = 50;

    private final AccountService accounts;
    private final CreditRequestParser parser;
    private final JsonWebToken jwt;
    private final int maxPageSize;

    public AccountResource(AccountService accounts, CreditRequestParser parser, JsonWebToken jwt, LedgerlineConfig config) {
        this.accounts = accounts;
        this.parser = parser;
        this.jwt = jwt;
        this.maxPageSize = config.http().maxPageSize();
    }

    @GET
    @Path("/me")
    @RolesAllowed(TransferResource.READ)
    public Uni<AccountViews.Balances> balances() {
        return accounts.balances(principal()).map(AccountViews.Balances::of);
    }

    @GET
    @Path("/me/entries")
    @RolesAllowed(TransferResource.READ)
    public Uni<AccountViews.EntryPage> entries(@QueryParam("after") String after, @QueryParam("limit") String limit) {
        String principal = principal();
        List<Problem.FieldError> errors = new ArrayList<>();
        int n = ListQuery.limit(limit, DEFAULT_LIMIT, maxPageSize, errors);
        long before = Long.MAX_VALUE;
        if (after != null) {
            try {
                before = Long.parseLong(after);
            } catch (NumberFormatException e) {
                before = -1;
            }
            if (before < 1) {
                errors.add(new Problem.FieldError("after", "must be a nextCursor this listing answered"));
            }
        }
        if (!errors.isEmpty()) {
            throw new ProblemException(ProblemType.VALIDATION_FAILED,
                    errors.size() == 1 ? "One field is not valid." : errors.size() + " fields are not valid.", errors, Map.of());
        }
        return accounts.entries(principal, before, n).map(AccountViews.EntryPage::of);
    }

    /** Books incoming money to {@code principal}'s account: 201 with the credit, the original on a replay. */
    @POST
    @Path("/{principal}/credits")
    @Consumes(MediaType.APPLICATION_JSON)
    @RolesAllowed(CREDIT)
    public Uni<Response> credit(@PathParam("principal") String principal, @HeaderParam("Idempotency-Key") String idempotencyKey,
                                HttpServerRequest http, byte[] body) {
        String caller = principal();
        return accounts.credit(caller, principal, () -> {
            if (principal.isBlank() || principal.length() > MAX_PRINCIPAL_LENGTH) {
                throw new ProblemException(ProblemType.VALIDATION_FAILED, "One field is not valid.",
                        List.of(new Problem.FieldError("principal", "must be 1 to " + MAX_PRINCIPAL_LENGTH + " characters")), Map.of());
            }
            IdempotencyKey key = IdempotencyKey.parse(Submissions.single(http, "Idempotency-Key", idempotencyKey));
            return new AccountService.CreditSubmission(key, parser.parse(body, Submissions.charset(http)));
        }).map(booked -> {
            Response.ResponseBuilder response = Response.status(Response.Status.CREATED)
                    .entity(AccountViews.CreditView.of(booked.credit()));
            if (booked.replayed()) {
                response.header("Idempotent-Replayed", "true");
            }
            return response.build();
        });
    }

    private String principal() {
        return Principals.of(jwt);
    }
}
