package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.problem.Problem;
import dev.ledgerline.transfers.problem.ProblemException;
import dev.ledgerline.transfers.problem.ProblemType;
import io.quarkus.security.AuthenticationFailedException;
import io.quarkus.security.ForbiddenException;
import io.quarkus.security.UnauthorizedException;
import io.vertx.core.http.HttpServerRequest;
import jakarta.ws.rs.NotAcceptableException;
import jakarta.ws.rs.NotAllowedException;
import jakarta.ws.rs.NotFoundException;
import jakarta.ws.rs.NotSupportedException;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Response;
import org.jboss.logging.Logger;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

import java.util.List;
import java.util.UUID;

/**
 * The one mapping from failures to RFC 9457 problem documents. Resources throw {@link ProblemException}
 * or let infrastructure failures through; nothing else builds error JSON, and no stack trace or HTML
 * ever reaches a client.
 */
public class ProblemMapper {

    private static final Logger LOG = Logger.getLogger(ProblemMapper.class);

    @ServerExceptionMapper
    public Response problem(ProblemException e, HttpServerRequest request) {
        Response.ResponseBuilder builder = builder(e.type(), e.getMessage(), request, e.errors(), e.transferStatus());
        e.headers().forEach(builder::header);
        return builder.build();
    }

    @ServerExceptionMapper({AuthenticationFailedException.class, UnauthorizedException.class})
    public Response unauthorized(RuntimeException e, HttpServerRequest request) {
        return builder(ProblemType.UNAUTHORIZED, "A valid bearer token is required.", request, null)
                .header("WWW-Authenticate", "Bearer")
                .build();
    }

    @ServerExceptionMapper
    public Response forbidden(ForbiddenException e, HttpServerRequest request) {
        return builder(ProblemType.FORBIDDEN, "The token lacks the group this operation needs.", request, null).build();
    }

    @ServerExceptionMapper
    public Response web(WebApplicationException e, HttpServerRequest request) {
        if (e instanceof NotFoundException) {
            return builder(ProblemType.NOT_FOUND, "No such resource.", request, null).build();
        }
        if (e instanceof NotAllowedException) {
            Response.ResponseBuilder b = builder(ProblemType.METHOD_NOT_ALLOWED, "This method is not allowed here.", request, null);
            String allow = AllowedMethods.forPath(request.path());
            if (allow == null && e.getResponse() != null) {
                allow = e.getResponse().getHeaderString("Allow");
            }
            if (allow != null) {
                b.header("Allow", allow);
            }
            return b.build();
        }
        if (e instanceof NotSupportedException) {
            return builder(ProblemType.UNSUPPORTED_MEDIA_TYPE, "Send the body as application/json.", request, null).build();
        }
        if (e instanceof NotAcceptableException) {
            return builder(ProblemType.NOT_ACCEPTABLE, "This resource answers application/json.", request, null).build();
        }
        int status = e.getResponse() == null ? 500 : e.getResponse().getStatus();
        if (status == 413) {
            return builder(ProblemType.PAYLOAD_TOO_LARGE, "The request body is too large.", request, null).build();
        }
        if (status >= 400 && status < 500) {
            return builder(ProblemType.MALFORMED_REQUEST, "The request could not be understood.", request, null).build();
        }
        return unexpected(e, request);
    }

    @ServerExceptionMapper
    public Response unexpected(Throwable e, HttpServerRequest request) {
        if (Unavailable.isDatabaseUnavailable(e)) {
            LOG.warnf("request %s %s: database unavailable: %s", request.method(), request.path(), e.toString());
            String detail = "POST".equals(request.method().name())
                    ? "The database is unavailable; retry later with the same Idempotency-Key."
                    : "The database is unavailable; retry later.";
            return builder(ProblemType.SERVICE_UNAVAILABLE, detail, request, null).header("Retry-After", "2").build();
        }
        String incident = UUID.randomUUID().toString();
        LOG.errorf(e, "request %s %s failed, incident %s", request.method(), request.path(), incident);
        return builder(ProblemType.INTERNAL_ERROR, "Unexpected error; incident " + incident + ".", request, null).build();
    }

    static Response.ResponseBuilder builder(ProblemType type, String detail, HttpServerRequest request,
                                            List<Problem.FieldError> errors) {
        return builder(type, detail, request, errors, null);
    }

    private static Response.ResponseBuilder builder(ProblemType type, String detail, HttpServerRequest request,
                                                    List<Problem.FieldError> errors, String transferStatus) {
        Problem body = new Problem(type.uri(), type.title(), type.status(), detail, request == null ? null : request.path(),
                errors, transferStatus);
        return Response.status(type.status()).type(Problem.MEDIA_TYPE).entity(body);
    }
}
