package dev.ledgerline.transfers.api;

import io.vertx.pgclient.PgException;

import java.io.IOException;
import java.net.SocketException;
import java.nio.channels.ClosedChannelException;
import java.util.concurrent.TimeoutException;

/** Recognises failures that mean "PostgreSQL is not reachable right now" (answered 503, never 500). */
final class Unavailable {

    private Unavailable() {
    }

    static boolean isDatabaseUnavailable(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            // a socket failure on the way to PostgreSQL: a refused connection and one it reset while shutting down
            // (SocketException, ClosedChannelException), and a reset while a new connection sends its startup message
            // to a restarting server, which Netty's write reports as a plain IOException. Redis failures never get
            // here (they fall back). Other IOExceptions (Jackson's among them) are not about reachability.
            if (t instanceof SocketException || t instanceof ClosedChannelException
                    || t instanceof IOException io && isReset(io.getMessage()) || t instanceof TimeoutException
                    || t instanceof io.vertx.sqlclient.ClosedConnectionException) {
                return true;
            }
            if (t instanceof PgException pg && pg.getSqlState() != null
                    && (pg.getSqlState().startsWith("08") || pg.getSqlState().startsWith("57P"))) {
                return true; // connection exceptions and admin shutdown / crash recovery
            }
            String message = String.valueOf(t.getMessage());
            if (message.contains("Connection refused") || message.contains("Connection is not active")
                    || message.contains("Failed to read any response from the server")) {
                return true;
            }
            // the server's certificate refused (another CA's, or for another host under verify-full): the pool's
            // connect fails with this message and no cause. PostgreSQL cannot be reached safely, as a restarting one
            // cannot be reached at all, and readiness says the same
            if (message.equals("SSL handshake failed")) {
                return true;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return false;
    }

    private static boolean isReset(String message) {
        return message != null && (message.contains("Connection reset") || message.contains("Broken pipe"));
    }
}
