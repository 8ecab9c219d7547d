package dev.ledgerline.devstack;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Loopback ports for servers that bind them later (the local PostgreSQL and Redis, a packaged instance).
 *
 * <p>A port found free is bound by another process seconds later, and meanwhile something else may take it. By default
 * the kernel picks an ephemeral port, which is fine for one test JVM at a time. A JVM given
 * {@value #WINDOW_PROPERTY}{@code =P} takes ports in turn from its own window of {@value #WINDOW_SIZE}, P to P + 499,
 * which must lie below the ephemeral range (32768 and up on Linux) with room for a Redis cluster node's bus port (port
 * + 10000): no outgoing connection is ever given such a port, and JVMs with different windows never pick the same one:
 * the service's surefire forks are given {@code 1${surefire.forkNumber}000}, the integration tests' failsafe forks
 * {@code 1${surefire.forkNumber}500}, and both kinds run at once under {@code .ci/verify}.
 *
 * <p>A window starts at {@value #LOWEST_WINDOW} or above, so every port it hands out, and every bus port of a cluster
 * node on one, is at least that: a port a JVM listens on by a fixed number (the test HTTP and management ports) stays
 * below it and is never taken from under it. A cluster node keeps its bus port for as long as it runs, across the
 * restarts of the application under test, so a collision there would fail every start after it.
 */
public final class FreePorts {

    /** The system property naming the first port of this JVM's window. */
    public static final String WINDOW_PROPERTY = "devstack.ports.from";
    static final int WINDOW_SIZE = 500;
    /** The lowest first port of a window: fixed listening ports stay below it. */
    public static final int LOWEST_WINDOW = 10_000;
    /** How far above its port a Redis cluster node listens for its peers (its cluster bus). */
    public static final int BUS_OFFSET = 10_000;
    private static final int HIGHEST = 32767 - BUS_OFFSET - WINDOW_SIZE + 1; // a cluster bus port stays below 32768
    /** From a random place in the window: two builds on one machine with the same window rarely meet. */
    private static final AtomicInteger TURN = new AtomicInteger(ThreadLocalRandom.current().nextInt(WINDOW_SIZE));

    private FreePorts() {
    }

    /** A loopback port free right now: the next free one of this JVM's window, or one the kernel picks. */
    public static int find() throws IOException {
        return find(0);
    }

    /**
     * A loopback port free right now whose cluster bus port ({@link #BUS_OFFSET} above it) is free too, for a Redis
     * cluster node: the next such one of this JVM's window, or one the kernel picks.
     */
    public static int findWithBus() throws IOException {
        return find(BUS_OFFSET);
    }

    private static int find(int busOffset) throws IOException {
        String from = System.getProperty(WINDOW_PROPERTY, "").trim();
        if (from.isEmpty()) {
            for (int tried = 0; tried < 100; tried++) {
                int port = bind(0);
                if (busOffset == 0 || (port + busOffset <= 65_535 && free(port + busOffset))) {
                    return port;
                }
            }
            throw new IOException("No free port with a free port " + busOffset + " above it");
        }
        int start = windowStart(from);
        for (int tried = 0; tried < WINDOW_SIZE; tried++) {
            int port = start + Math.floorMod(TURN.getAndIncrement(), WINDOW_SIZE);
            // in use (a system service, or a server of this JVM still bound): the next one
            if (free(port) && (busOffset == 0 || free(port + busOffset))) {
                return port;
            }
        }
        throw new IOException("No free port in " + start + "–" + (start + WINDOW_SIZE - 1));
    }

    private static boolean free(int port) {
        try {
            bind(port);
            return true;
        } catch (IOException taken) {
            return false;
        }
    }

    static int windowStart(String from) {
        int start;
        try {
            start = Integer.parseInt(from);
        } catch (NumberFormatException e) {
            start = -1;
        }
        if (start < LOWEST_WINDOW || start > HIGHEST) {
            throw new IllegalArgumentException(
                    WINDOW_PROPERTY + " must be a port from " + LOWEST_WINDOW + " to " + HIGHEST + ", not '" + from + "'");
        }
        return start;
    }

    private static int bind(int port) throws IOException {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress("127.0.0.1", port));
            return socket.getLocalPort();
        }
    }

    /** Start-up only: polls the port until it accepts connections, the process dies, or time runs out. */
    static void awaitListening(int port, Duration timeout, Process process) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IOException("Server on port " + port + " exited with code " + process.exitValue());
            }
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
                return;
            } catch (IOException notYet) {
                try {
                    Thread.sleep(20); // blocking-ok: start-up, before Quarkus runs
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("Interrupted while waiting for port " + port, e);
                }
            }
        }
        throw new IOException("Server did not listen on port " + port + " within " + timeout);
    }
}
