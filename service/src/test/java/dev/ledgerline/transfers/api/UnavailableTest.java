package dev.ledgerline.transfers.api;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketException;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Which failures are "PostgreSQL is not reachable" (503 with Retry-After, retry with the same key) rather
 * than a 500. The fault suite found a connection reset by a stopping PostgreSQL answered as 500.
 */
class UnavailableTest {

    @Test
    void aConnectionResetWhilePostgresStopsIsUnavailableNotAnInternalError() {
        assertTrue(Unavailable.isDatabaseUnavailable(new SocketException("Connection reset")));
        assertTrue(Unavailable.isDatabaseUnavailable(new RuntimeException("wrapped", new SocketException("Connection reset"))));
    }

    @Test
    void aResetWhileANewConnectionStartsIsUnavailable() {
        // Netty's socket write throws a plain IOException, not a SocketException: FaultsIT's postgres-restarted
        // scenario once answered such a request 500 (the reset came while the pool sent a startup message)
        assertTrue(Unavailable.isDatabaseUnavailable(new IOException("Connection reset by peer")));
        assertTrue(Unavailable.isDatabaseUnavailable(new IllegalStateException("pool", new IOException("Connection reset by peer"))));
    }

    @Test
    void aRefusedConnectionIsUnavailable() {
        assertTrue(Unavailable.isDatabaseUnavailable(new ConnectException("Connection refused")));
    }

    @Test
    void aServerTheTlsSettingsCannotVerifyIsUnavailable() {
        // TlsIT: under verify-full, a certificate for another host fails the pool's connect with this
        // (stackless, no cause), which was answered 500
        assertTrue(Unavailable.isDatabaseUnavailable(new io.vertx.core.VertxException("SSL handshake failed", true)));
    }

    @Test
    void aProgrammingErrorIsNot() {
        assertFalse(Unavailable.isDatabaseUnavailable(new IllegalStateException("a bug")));
        assertFalse(Unavailable.isDatabaseUnavailable(new IOException("Unexpected character in the answer")));
    }
}
