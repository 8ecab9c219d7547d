package dev.ledgerline.transfers.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.transfers.problem.Problem;
import dev.ledgerline.transfers.problem.ProblemException;
import dev.ledgerline.transfers.problem.ProblemType;
import dev.ledgerline.transfers.service.TransferService;
import dev.ledgerline.transfers.webhooks.WebhookRepository;
import dev.ledgerline.transfers.webhooks.WebhookSender;
import dev.ledgerline.transfers.webhooks.WebhookSignature;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.jwt.JsonWebToken;

import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * {@code /v1/webhook-endpoints}: register, list and remove the endpoints the event feed is pushed to, and read an
 * endpoint's recent delivery attempts (scope {@code webhooks.admin}). Delivery itself is
 * {@code webhooks.WebhookDeliverer}'s.
 */
@Path("/v1/webhook-endpoints")
@RolesAllowed(WebhookResource.ADMIN)
public class WebhookResource {

    public static final String ADMIN = "webhooks.admin";

    /** Endpoints listed at most (the list has no paging: a handful of endpoints is what this is for). */
    static final int MAX_LISTED = 1000;
    /** Attempts shown per endpoint. */
    static final int RECENT_ATTEMPTS = 100;
    static final int MAX_DESCRIPTION = 256;

    private static final Set<String> FIELDS = Set.of("url", "description");

    private final WebhookRepository endpoints;
    private final WebhookSender sender;
    private final ObjectMapper mapper;
    private final JsonWebToken jwt;
    private final TransferService admission;
    private final Duration previousSecretValidFor;

    public WebhookResource(WebhookRepository endpoints, WebhookSender sender, ObjectMapper mapper, JsonWebToken jwt,
                           TransferService admission, LedgerlineConfig config) {
        this.admission = admission;
        this.previousSecretValidFor = config.webhooks().previousSecretValidFor();
        this.endpoints = endpoints;
        this.sender = sender;
        this.mapper = mapper;
        this.jwt = jwt;
    }

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<Response> create(byte[] body) {
        return admission.admitWrite(principal()).chain(() -> register(body));
    }

    private Uni<Response> register(byte[] body) {
        JsonNode json;
        try {
            json = mapper.readTree(body);
        } catch (JsonProcessingException e) {
            throw new ProblemException(ProblemType.MALFORMED_REQUEST, "The body is not JSON.");
        } catch (IOException e) {
            throw new ProblemException(ProblemType.MALFORMED_REQUEST, "The body could not be read.");
        }
        List<Problem.FieldError> errors = new ArrayList<>();
        if (json == null || !json.isObject()) {
            throw new ProblemException(ProblemType.VALIDATION_FAILED, "The endpoint is not valid.",
                    List.of(new Problem.FieldError("", "must be a JSON object")), Map.of());
        }
        for (Iterator<String> names = json.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!FIELDS.contains(name)) {
                errors.add(new Problem.FieldError(name, "is not a field of a webhook endpoint"));
            }
        }
        JsonNode urlNode = json.get("url");
        URI uri = null;
        if (urlNode == null || !urlNode.isTextual()) {
            errors.add(new Problem.FieldError("url", "is required, a string"));
        } else {
            try {
                uri = sender.policy().parse(urlNode.asText());
            } catch (IllegalArgumentException e) {
                errors.add(new Problem.FieldError("url", e.getMessage()));
            }
        }
        JsonNode descriptionNode = json.get("description");
        String description = null;
        if (descriptionNode != null && !descriptionNode.isNull()) {
            if (!descriptionNode.isTextual() || descriptionNode.asText().length() > MAX_DESCRIPTION) {
                errors.add(new Problem.FieldError("description", "must be a string of at most " + MAX_DESCRIPTION + " characters"));
            } else {
                description = descriptionNode.asText().strip();
                description = description.isEmpty() ? null : description;
            }
        }
        if (!errors.isEmpty()) {
            throw new ProblemException(ProblemType.VALIDATION_FAILED, "The endpoint is not valid.", errors, Map.of());
        }
        String url = urlNode.asText();
        String text = description;
        return sender.resolve(uri)
                .onFailure(WebhookSender.RefusedAddressException.class).transform(e -> new ProblemException(
                        ProblemType.VALIDATION_FAILED, "The endpoint is not valid.",
                        List.of(new Problem.FieldError("url", e.getMessage())), Map.of()))
                .chain(address -> {
                    String secret = WebhookSignature.newSecret();
                    return endpoints.create(url, text, secret).map(e -> Response.status(Response.Status.CREATED)
                            .header("Location", "/v1/webhook-endpoints/" + e.id())
                            .entity(new WebhookViews.Created(e.id(), e.url(), e.description(), secret, e.createdAt()))
                            .build());
                });
    }

    @GET
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<WebhookViews.EndpointList> list() {
        return admission.admitRead(principal()).chain(() -> endpoints.list(MAX_LISTED))
                .map(all -> new WebhookViews.EndpointList(all.stream().map(WebhookViews.Endpoint::of).toList()));
    }

    @DELETE
    @Path("/{id}")
    public Uni<Response> delete(@PathParam("id") String id) {
        String principal = principal();
        UUID uuid = id(id);
        return admission.admitWrite(principal).chain(() -> endpoints.delete(uuid)).map(deleted -> {
            if (!deleted) {
                throw notFound();
            }
            return Response.noContent().build();
        });
    }

    /**
     * A new secret for the endpoint, shown in this answer only. The one it replaces goes on signing deliveries beside
     * it (a second {@code v1}) until {@code previousSecretExpiresAt}, so the receiver can switch without a refusal.
     */
    @POST
    @Path("/{id}/secret")
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<WebhookViews.SecretRotated> rotateSecret(@PathParam("id") String id) {
        UUID uuid = id(id);
        String secret = WebhookSignature.newSecret();
        return admission.admitWrite(principal()).chain(() -> endpoints.rotate(uuid, secret, previousSecretValidFor)).map(until -> {
            if (until == null) {
                throw notFound();
            }
            return new WebhookViews.SecretRotated(uuid, secret, until);
        });
    }

    @GET
    @Path("/{id}/deliveries")
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<WebhookViews.DeliveryList> deliveries(@PathParam("id") String id) {
        UUID uuid = id(id);
        return admission.admitRead(principal()).chain(() -> endpoints.attempts(uuid, RECENT_ATTEMPTS)).map(attempts -> {
            if (attempts == null) {
                throw notFound();
            }
            return new WebhookViews.DeliveryList(attempts.stream().map(WebhookViews.Delivery::of).toList());
        });
    }

    /** The caller, whose read and write budgets the calls spend like any other (429 beyond them). */
    private String principal() {
        return Principals.of(jwt);
    }

    private static UUID id(String id) {
        try {
            return UUID.fromString(id);
        } catch (IllegalArgumentException e) {
            throw notFound();
        }
    }

    private static ProblemException notFound() {
        return new ProblemException(ProblemType.NOT_FOUND, "There is no webhook endpoint with this id.");
    }
}
