package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.config.LedgerlineConfig;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpVersion;
import io.vertx.ext.web.Router;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.jboss.logging.Logger;

/**
 * Closes the connection of a client that has not finished sending its request body within
 * {@code ledgerline.transfers.body-timeout}. Nothing here holds a thread — bodies are read on the event
 * loop — but a slow-loris client would otherwise hold a connection (one of
 * {@code quarkus.http.limits.max-connections}) and a partly read body for as long as it kept trickling,
 * since the idle timeout restarts with every byte. One timer per request that still has a body to send.
 */
@ApplicationScoped
public class SlowBodyGuard {

    private static final Logger LOG = Logger.getLogger(SlowBodyGuard.class);

    void install(@Observes Router router, Vertx vertx, LedgerlineConfig config) {
        long timeoutMs = config.transfers().bodyTimeout().toMillis();
        router.route().order(Integer.MIN_VALUE).handler(rc -> {
            HttpServerRequest request = rc.request();
            if (!request.isEnded()) {
                long timer = vertx.setTimer(timeoutMs, id -> {
                    if (!request.isEnded() && request.connection() != null) {
                        LOG.infof("closing a connection from %s: request body not complete after %d ms",
                                request.remoteAddress(), timeoutMs);
                        if (request.version() == HttpVersion.HTTP_2) {
                            request.response().reset(); // one stream, not the client's other requests
                        } else {
                            request.connection().close();
                        }
                    }
                });
                rc.addEndHandler(done -> vertx.cancelTimer(timer));
            }
            rc.next();
        });
    }
}
