package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.transfers.config.StartupOrder;
import dev.ledgerline.transfers.problem.ProblemType;
import io.quarkus.arc.Arc;
import io.quarkus.arc.ClientProxy;
import io.quarkus.runtime.StartupEvent;
import io.vertx.core.http.HttpServerRequest;
import jakarta.annotation.Priority;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.Instance;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.core.Response;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;

/**
 * Refuses a declared oversized body before a byte of it is read, with a problem document. Bodies
 * without a Content-Length are bounded after reading by {@link TransferRequestParser}, and by the HTTP
 * server's own hard limit beyond that.
 *
 * <p>The filter Quarkus REST generates around {@link #limitBody} is {@code @ApplicationScoped}, behind a client proxy:
 * it reads runtime configuration, so it cannot be built with the filter chain at static init. Left to its first call
 * it would be built on an event loop at the first request, and a second loop serving a first request meanwhile would
 * wait on its creation lock; {@link #build} builds it at start-up instead.
 */
public class BodySizeFilter {

    /** The prefix of the names Quarkus REST gives the filters it generates from this class's methods. */
    static final String GENERATED = BodySizeFilter.class.getName() + "$Generated";

    private final long maxBodyBytes;

    public BodySizeFilter(LedgerlineConfig config) {
        this.maxBodyBytes = config.http().maxBodyBytes();
    }

    /** Builds the generated filter, and this bean under it, on the start-up thread. */
    static void build(@Observes @Priority(StartupOrder.BEFORE_SCHEDULER) StartupEvent start) {
        // handles are lazy: only the matching bean is built
        for (Instance.Handle<ContainerRequestFilter> filter
                : Arc.container().select(ContainerRequestFilter.class, Any.Literal.INSTANCE).handles()) {
            if (filter.getBean().getBeanClass().getName().startsWith(GENERATED)) {
                ClientProxy.unwrap(filter.get());
            }
        }
    }

    @ServerRequestFilter(preMatching = true)
    public Response limitBody(HttpServerRequest request) {
        String declared = request.getHeader("Content-Length");
        if (declared == null) {
            return null;
        }
        long length;
        try {
            length = Long.parseLong(declared.trim());
        } catch (NumberFormatException e) {
            return ProblemMapper.builder(ProblemType.MALFORMED_REQUEST, "Content-Length is not a number.", request, null).build();
        }
        if (length > maxBodyBytes) {
            return ProblemMapper.builder(ProblemType.PAYLOAD_TOO_LARGE,
                    "The request body is larger than " + maxBodyBytes + " bytes.", request, null).build();
        }
        return null;
    }
}
