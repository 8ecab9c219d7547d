package dev.ledgerline.transfers.api;

import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

import java.util.regex.Pattern;

/**
 * The methods each {@code /v1} resource answers, in one place: the {@code Allow} header of a 405 (RFC 9110
 * §15.5.6 requires it) and the answer to {@code OPTIONS}. {@code HEAD} is a {@code GET} without its body;
 * {@code OPTIONS} answers {@code 204} with {@code Allow} and nothing else, without a token, since the set of
 * methods is the same for everyone. A CORS preflight (an {@code OPTIONS} with
 * {@code Access-Control-Request-Method}) is left to the CORS handling.
 */
@ApplicationScoped
public class AllowedMethods {

    static final String COLLECTION = "GET, HEAD, POST, OPTIONS";
    /** A transfer, its events, and the read-only collection {@code /v1/me/transfers}. */
    static final String ITEM = "GET, HEAD, OPTIONS";
    static final String ACTION = "POST, OPTIONS";

    private static final Pattern TRANSFER = Pattern.compile("/v1/transfers/[^/]+(/events)?/?");
    private static final Pattern TRANSFER_ACTION = Pattern.compile("/v1/transfers/[^/]+/cancel/?");

    /** Right after the body deadline ({@link SlowBodyGuard}), before every filter. */
    static final int ORDER = Integer.MIN_VALUE + 1;

    void install(@Observes Router router) {
        router.route().order(ORDER).handler(this::options);
    }

    private void options(RoutingContext rc) {
        if (rc.request().method() == HttpMethod.OPTIONS && rc.request().getHeader("Access-Control-Request-Method") == null) {
            String allow = forPath(rc.normalizedPath());
            if (allow != null) {
                rc.response().setStatusCode(204).putHeader("Allow", allow).end();
                return;
            }
        }
        rc.next();
    }

    /** The {@code Allow} value of a {@code /v1} path, or {@code null} for a path this class does not describe. */
    static String forPath(String path) {
        if (path == null) {
            return null;
        }
        if (path.equals("/v1/transfers") || path.equals("/v1/transfers/")) {
            return COLLECTION;
        }
        if (TRANSFER.matcher(path).matches() || path.equals("/v1/me/transfers") || path.equals("/v1/me/transfers/")) {
            return ITEM;
        }
        if (TRANSFER_ACTION.matcher(path).matches()) {
            return ACTION;
        }
        return null;
    }
}
