package dev.ledgerline.devstack;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;

/** Loopback port helpers for the local servers. */
final class FreePorts {

    private FreePorts() {
    }

    static int find() throws IOException {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress("127.0.0.1", 0));
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
