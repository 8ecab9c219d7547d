package dev.ledgerline.transfers.security;

import dev.ledgerline.transfers.problem.ProblemType;
import dev.ledgerline.transfers.support.Api;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URL;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A slow-loris client (OWASP API4, unrestricted resource consumption): headers sent, then the body a
 * byte at a time, never finishing. The idle timeout would never fire (bytes keep coming); the body
 * deadline ({@code ledgerline.http.body-timeout}, 10 s, as in production) closes the connection.
 */
@QuarkusTest
class SlowClientTest {

    @TestHTTPResource("/")
    URL base;

    @Test
    void aClientTricklingItsBodyIsDisconnectedAtTheBodyDeadline() throws Exception {
        String token = Api.writer("slow-loris");
        try (Socket socket = new Socket(base.getHost(), base.getPort())) {
            socket.setSoTimeout(250);
            OutputStream out = socket.getOutputStream();
            InputStream in = socket.getInputStream();
            out.write(("POST /v1/transfers HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + token
                    + "\r\nContent-Type: application/json\r\nIdempotency-Key: slow-1\r\nContent-Length: 4000\r\n\r\n{")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            long start = System.nanoTime();
            boolean closed = false;
            while (!closed && elapsedMs(start) < 25_000) {
                try {
                    out.write(' ');
                    out.flush();
                } catch (java.io.IOException reset) {
                    closed = true;
                    break;
                }
                try {
                    // anything the server sends before closing (there should be nothing) is read past
                    closed = drain(in);
                } catch (SocketTimeoutException stillOpen) {
                    // still open: trickle on
                } catch (java.io.IOException reset) {
                    closed = true;
                }
            }
            long after = elapsedMs(start);
            assertTrue(closed, "the connection should have been closed, still open after " + after + " ms");
            // not before the deadline; the upper end is the loop's own 25 s, below the 45 s idle timeout that a
            // trickle keeps resetting (a loaded machine may fire the deadline's timer late)
            assertTrue(after >= 9_500, "closed after " + after + " ms; the body deadline is 10000 ms");
        }
    }

    @Test
    void aRequestAnsweredBeforeItsBodyIsNotReadAnyFurther() throws Exception {
        // no token: 401 before the body is read; a GET that was sent a body: answered, body unread
        assertAnsweredThenClosed("POST /v1/transfers HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                + "Idempotency-Key: slow-2\r\nContent-Length: 4000\r\n\r\n{", "401");
        assertAnsweredThenClosed("GET /v1/transfers HTTP/1.1\r\nHost: localhost\r\nContent-Length: 4000\r\n\r\n{", "401");
    }

    @Test
    void aDeclaredHugeBodyIsRefusedBeforeItIsSent() throws Exception {
        // only the head goes out: the 413 problem must come back without a byte of the 200 KB being read
        String answer = assertAnsweredThenClosed("POST /v1/transfers HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer "
                + Api.writer("val") + "\r\nContent-Type: application/json\r\nIdempotency-Key: huge-1\r\n"
                + "Content-Length: 200000\r\n\r\n{", "413");
        assertTrue(answer.contains("application/problem+json"), answer);
        assertTrue(answer.contains(ProblemType.PAYLOAD_TOO_LARGE.uri()), answer);
    }

    /**
     * Sends {@code head}, then trickles a byte every 250 ms: the answer must come, and the connection must be
     * closed well before the body deadline (10 s) instead of being kept open by the trickle.
     */
    private String assertAnsweredThenClosed(String head, String status) throws Exception {
        try (Socket socket = new Socket(base.getHost(), base.getPort())) {
            socket.setSoTimeout(250);
            OutputStream out = socket.getOutputStream();
            InputStream in = socket.getInputStream();
            out.write(head.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            long start = System.nanoTime();
            StringBuilder answer = new StringBuilder();
            boolean closed = false;
            byte[] buffer = new byte[4096];
            while (!closed && elapsedMs(start) < 20_000) {
                try {
                    int n = in.read(buffer);
                    if (n < 0) {
                        closed = true;
                    } else {
                        answer.append(new String(buffer, 0, n, StandardCharsets.ISO_8859_1));
                    }
                } catch (SocketTimeoutException stillOpen) {
                    try {
                        out.write(' ');
                        out.flush();
                    } catch (java.io.IOException reset) {
                        closed = true;
                    }
                } catch (java.io.IOException reset) {
                    closed = true;
                }
            }
            long after = elapsedMs(start);
            assertTrue(answer.toString().startsWith("HTTP/1.1 " + status), "answered: " + answer);
            assertTrue(closed, "still reading the body " + after + " ms after answering");
            assertTrue(after < 8_000, "closed after " + after + " ms: by the 10 s body deadline, not by the answer");
            return answer.toString();
        }
    }

    /** true at end of stream */
    private static boolean drain(InputStream in) throws java.io.IOException {
        byte[] buffer = new byte[1024];
        int n = in.read(buffer);
        return n < 0;
    }

    private static long elapsedMs(long start) {
        return (System.nanoTime() - start) / 1_000_000;
    }
}
