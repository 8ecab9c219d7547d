package dev.ledgerline.transfers.api;

import dev.ledgerline.transfers.config.Deadlines;
import dev.ledgerline.transfers.config.Deadlines.Deadline;
import dev.ledgerline.transfers.config.LedgerlineConfig;
import io.quarkus.vertx.http.ManagementInterface;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpVersion;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.jboss.logging.Logger;

import java.util.Set;

/**
 * Bounds how long any request may spend sending its body, on every route of the router it is installed on:
 * a request that announces a body and has not finished sending it {@code ledgerline.http.body-timeout}
 * after its headers loses its connection (its stream, on HTTP/2), and a request answered before its body
 * was read — a 401, a 415, a 413, a health check with a body — is not read any further: the connection is
 * closed after the answer instead of being kept open to drain whatever the client keeps trickling.
 *
 * <p>A request that announces no body (HTTP/1.x without {@code Content-Length} or {@code Transfer-Encoding},
 * or {@code Content-Length: 0}) has no deadline at all: it may be held for as long as its answer needs,
 * which is what a long poll ({@code Prefer: wait=30}) is. The HTTP server does not mark such a request as
 * ended until someone reads it, so "not ended" alone cannot tell a held poll from a slow body.
 *
 * <p>Nothing here holds a thread; a slow-loris client would otherwise hold a connection (one of
 * {@code quarkus.http.limits.max-connections}) for as long as it kept trickling, since the idle timeout
 * restarts with every byte. One {@link Deadlines} deadline per request that still has a body to send, checked with
 * the others a tenth of the deadline apart: a body is cut between 10 and 11 s after its headers at the default.
 */
@ApplicationScoped
public class SlowBodyGuard {

    private static final Logger LOG = Logger.getLogger(SlowBodyGuard.class);

    /** HTTP/2 requests need not announce their length; these methods are taken to carry a body when they don't. */
    private static final Set<HttpMethod> BODY_METHODS = Set.of(HttpMethod.POST, HttpMethod.PUT, HttpMethod.PATCH);

    private final Vertx vertx;
    private final long timeoutMs;
    /** Every body's deadline: one length, so one periodic check instead of a timer per request. */
    private final Deadlines deadlines;

    public SlowBodyGuard(Vertx vertx, LedgerlineConfig config) {
        this.vertx = vertx;
        this.timeoutMs = config.http().bodyTimeout().toMillis();
        this.deadlines = new Deadlines(vertx, config.http().bodyTimeout());
    }

    void install(@Observes Router router) {
        guard(router);
    }

    /** The management interface ({@code /q/*}) is a server of its own: the same deadline there. */
    void installOnManagement(@Observes ManagementInterface management) {
        guard(management.router());
    }

    @PreDestroy
    void stop() {
        deadlines.close();
    }

    /** Puts the deadline in front of every route of {@code router}; the first handler any request meets. */
    public void guard(Router router) {
        router.route().order(Integer.MIN_VALUE).handler(this::handle);
    }

    private void handle(RoutingContext rc) {
        HttpServerRequest request = rc.request();
        if (request.isEnded() || !announcesBody(request)) {
            rc.next();
            return;
        }
        Watch watch = new Watch(System.nanoTime());
        Deadline deadline = deadlines.arm(() -> expired(request, watch));
        rc.addEndHandler(done -> {
            // on the request's event loop, where its deadline expires too
            watch.answered = true;
            deadline.settle();
            if (watch.extension >= 0) {
                vertx.cancelTimer(watch.extension);
            }
            if (!request.isEnded()) {
                // answered before the body was read (or fully sent): reading on would let the client keep the
                // connection with a byte now and then, long after its answer
                LOG.debugf("closing a connection from %s: answered before its request body was read", request.remoteAddress());
                drop(request);
            }
        });
        rc.next();
    }

    /**
     * The deadline counts the client's time, not ours: a deadline checked late (its event loop was stalled, so the
     * body may be sitting unread in the socket) gets the part of it the stall took away, once.
     */
    private void expired(HttpServerRequest request, Watch watch) {
        if (watch.answered || request.isEnded()) {
            return;
        }
        long lateMs = (System.nanoTime() - watch.armedAt) / 1_000_000 - timeoutMs;
        if (lateMs > timeoutMs / 2) {
            watch.extension = vertx.setTimer(Math.min(lateMs, timeoutMs), id -> {
                if (!watch.answered && !request.isEnded()) {
                    tooSlow(request);
                }
            });
            return;
        }
        tooSlow(request);
    }

    /** One request's body deadline: when it was armed, the timer that extends it (if any), whether it was answered. */
    private static final class Watch {
        final long armedAt;
        long extension = -1;
        boolean answered;

        Watch(long armedAt) {
            this.armedAt = armedAt;
        }
    }

    private void tooSlow(HttpServerRequest request) {
        LOG.infof("closing a connection from %s: request body not complete after %d ms", request.remoteAddress(), timeoutMs);
        drop(request);
    }

    static boolean announcesBody(HttpServerRequest request) {
        String length = request.getHeader("Content-Length");
        if (length != null) {
            return !length.trim().equals("0");
        }
        if (request.version() == HttpVersion.HTTP_2) {
            return BODY_METHODS.contains(request.method());
        }
        return request.getHeader("Transfer-Encoding") != null;
    }

    private static void drop(HttpServerRequest request) {
        if (request.connection() == null) {
            return;
        }
        if (request.version() == HttpVersion.HTTP_2) {
            request.response().reset(); // one stream, not the client's other requests
        } else {
            request.connection().close();
        }
    }
}
