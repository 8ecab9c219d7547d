package dev.ledgerline.transfers.webhooks;

import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real webhook receiver on 127.0.0.1: answers 500 to its first {@code failFirst} requests and 200 after, can be
 * stopped (connections refused) and started again on the same port, and records every request it got with how many
 * requests were inside it at once.
 */
final class Receiver implements AutoCloseable {

    /** One request as it arrived; {@code answered} is the status the receiver sent. */
    record Received(String eventId, String signature, String body, long atMillis, int answered) {
    }

    final ConcurrentLinkedQueue<Received> received = new ConcurrentLinkedQueue<>();
    final AtomicInteger inFlight = new AtomicInteger();
    final AtomicInteger maxInFlight = new AtomicInteger();
    private final AtomicInteger toFail;
    private final long holdMillis;
    private final int port;
    private volatile HttpServer server;

    Receiver(int failFirst, long holdMillis) throws IOException {
        this.toFail = new AtomicInteger(failFirst);
        this.holdMillis = holdMillis;
        this.server = start(0);
        this.port = server.getAddress().getPort();
    }

    String url() {
        return "http://127.0.0.1:" + port + "/hooks/ledgerline";
    }

    private HttpServer start(int onPort) throws IOException {
        HttpServer s = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), onPort), 50);
        s.setExecutor(Executors.newFixedThreadPool(4, r -> {
            Thread t = new Thread(r, "webhook-receiver");
            t.setDaemon(true);
            return t;
        }));
        s.createContext("/hooks/ledgerline", exchange -> {
            int now = inFlight.incrementAndGet();
            maxInFlight.accumulateAndGet(now, Math::max);
            try (InputStream in = exchange.getRequestBody()) {
                String body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                Thread.sleep(holdMillis); // a receiver that takes a moment: overlapping sends would show here
                int status = toFail.getAndDecrement() > 0 ? 500 : 200;
                received.add(new Received(exchange.getRequestHeaders().getFirst("Ledgerline-Event-Id"),
                        exchange.getRequestHeaders().getFirst("Ledgerline-Signature"), body, System.currentTimeMillis(), status));
                byte[] answer = (status == 200 ? "ok" : "receiver is failing on purpose").getBytes(StandardCharsets.UTF_8);
                exchange.sendResponseHeaders(status, answer.length);
                exchange.getResponseBody().write(answer);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                inFlight.decrementAndGet();
                exchange.close();
            }
        });
        s.start();
        return s;
    }

    /** Connections are refused from now on. */
    void stop() {
        server.stop(0);
    }

    /** Back on the same port, answering 200. */
    void startAgain() throws IOException {
        toFail.set(0);
        server = start(port);
    }

    List<Received> delivered() {
        return received.stream().filter(r -> r.answered() == 200).toList();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
