package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.service.TransferService;
import dev.ledgerline.transfers.transfer.Transfer;
import jakarta.ws.rs.core.Request;
import jakarta.ws.rs.core.Response;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The successful answers about one transfer: its view, its version as a strong {@code ETag}, 304 for a matching
 * {@code If-None-Match} (through {@link Request#evaluatePreconditions}), and {@code Preference-Applied} after a wait.
 */
final class TransferResponses {

    private TransferResponses() {
    }

    static Response created(TransferService.Created created) {
        Transfer t = created.transfer();
        // relative on purpose (RFC 9110 §10.2.2): an absolute one would echo whatever Host the client sent
        // a replay answers with the body its idempotency entry kept, as written for the first answer of this shape
        Response.ResponseBuilder response = Response.status(Response.Status.CREATED)
                .header("Location", "/v1/transfers/" + t.id())
                .entity(created.response() != null ? created.response().getBytes(StandardCharsets.UTF_8) : TransferView.of(t))
                .tag(TransferView.etag(t));
        if (created.replayed()) {
            response.header("Idempotent-Replayed", "true");
        }
        return applied(response, created.waited()).build();
    }

    /** 200 with the cancelled transfer and its version as the {@code ETag}. */
    static Response cancelled(Transfer t) {
        return Response.ok(TransferView.of(t)).tag(TransferView.etag(t)).build();
    }

    /** 200 with the transfer, or 304 when the request's If-None-Match names its current version. */
    static Response current(Transfer t, Request request, Duration waited) {
        Response.ResponseBuilder response = unchanged(request, t) ? Response.notModified() : Response.ok(TransferView.of(t));
        return applied(response.tag(TransferView.etag(t)), waited).build();
    }

    /**
     * Whether the request's If-None-Match names the transfer's current version ({@code *} names every version).
     * It compares weakly (RFC 9110 §13.1.2), so {@code W/"n"} matches our strong {@code "n"} too; only a 304 counts,
     * so an If-Match that does not hold never turns a read into a 412.
     */
    static boolean unchanged(Request request, Transfer t) {
        return notModified(request.evaluatePreconditions(TransferView.etag(t)))
                || notModified(request.evaluatePreconditions(TransferView.weakEtag(t)));
    }

    private static boolean notModified(Response.ResponseBuilder precondition) {
        return precondition != null && precondition.build().getStatus() == Response.Status.NOT_MODIFIED.getStatusCode();
    }

    private static Response.ResponseBuilder applied(Response.ResponseBuilder response, Duration waited) {
        return waited == null ? response : response.header("Preference-Applied", Prefer.applied(waited));
    }
}
