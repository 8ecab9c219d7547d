package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.transfers.problem.ProblemType;
import io.vertx.core.http.HttpServerRequest;
import jakarta.ws.rs.core.Response;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;

/**
 * Refuses a declared oversized body before a byte of it is read, with a problem document. Bodies
 * without a Content-Length are bounded after reading by {@link TransferRequestParser}, and by the HTTP
 * server's own hard limit beyond that.
 */
public class BodySizeFilter {

    private final long maxBodyBytes;

    public BodySizeFilter(LedgerlineConfig config) {
        this.maxBodyBytes = config.http().maxBodyBytes();
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
