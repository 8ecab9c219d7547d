package dev.ledgerline.transfers.conformance;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;

/**
 * A provider stand-in that serves {@code provider-api.yaml} and keeps every obligation — except the one
 * {@link Flaw} it is told to break. It exists to prove the conformance kit has teeth: each flaw must make
 * exactly its own obligation fail. A send of {@link #REJECTED_AMOUNT} is rejected, so the kit can provoke
 * a rejection the way it would at a real provider (by a known order).
 */
final class StandInProvider implements AutoCloseable {

    static final long REJECTED_AMOUNT = 40_200;

    enum Flaw {
        NONE,
        /** Every send executes, whatever its key (a provider without idempotency). */
        EXECUTES_TWICE_PER_KEY,
        /** Executes a send whose Ledgerline-Not-After has passed. */
        IGNORES_DEADLINE,
        /** Lookups answer 404 for everything, executed or not. */
        LOOKUP_LIES,
        /** Lookups do not see an execution younger than {@link #LAG_MS}. */
        LOOKUP_LAGS,
        /** A rejected key executes when sent again. */
        FORGETS_REJECTIONS,
        /** Checks the deadline when a send arrives, then applies it after holding it: a late execution. */
        CHECKS_DEADLINE_ON_ARRIVAL
    }

    static final long LAG_MS = 1000;

    private record Payment(String status, int executions, Instant at) {
    }

    private final Flaw flaw;
    private final HttpServer server;
    private final Map<String, Payment> payments = new ConcurrentHashMap<>();
    private final java.util.concurrent.atomic.AtomicLong holdNextMs = new java.util.concurrent.atomic.AtomicLong();

    private StandInProvider(Flaw flaw) throws IOException {
        this.flaw = flaw;
        this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/payments", this::handle);
        server.setExecutor(Executors.newFixedThreadPool(4));
        server.start();
    }

    static StandInProvider start(Flaw flaw) throws IOException {
        return new StandInProvider(flaw);
    }

    /** The next send is held this long inside the provider before it is applied. */
    void holdNext(long ms) {
        holdNextMs.set(ms);
    }

    URI base() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            String path = exchange.getRequestURI().getPath();
            if ("POST".equals(exchange.getRequestMethod()) && path.equals("/payments")) {
                send(exchange);
            } else if ("GET".equals(exchange.getRequestMethod()) && path.startsWith("/payments/")) {
                lookup(exchange, path.substring("/payments/".length()));
            } else {
                answer(exchange, 404, null);
            }
        }
    }

    private void send(HttpExchange exchange) throws IOException {
        String key = exchange.getRequestHeaders().getFirst("Idempotency-Key");
        String notAfter = exchange.getRequestHeaders().getFirst("Ledgerline-Not-After");
        String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
        if (key == null || notAfter == null || body.isBlank()) {
            answer(exchange, 400, null);
            return;
        }
        Instant deadline = OffsetDateTime.parse(notAfter).toInstant();
        if (flaw == Flaw.CHECKS_DEADLINE_ON_ARRIVAL && Instant.now().isAfter(deadline)) {
            answer(exchange, 412, "{\"status\":\"expired\"}");
            return;
        }
        long hold = holdNextMs.getAndSet(0);
        if (hold > 0) {
            try {
                Thread.sleep(hold);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        apply(exchange, key, deadline, body);
    }

    private synchronized void apply(HttpExchange exchange, String key, Instant deadline, String body) throws IOException {
        boolean checksWhenApplied = flaw != Flaw.IGNORES_DEADLINE && flaw != Flaw.CHECKS_DEADLINE_ON_ARRIVAL;
        if (checksWhenApplied && Instant.now().isAfter(deadline)) {
            answer(exchange, 412, "{\"status\":\"expired\"}");
            return;
        }
        Payment known = payments.get(key);
        boolean rejectedBefore = known != null && "rejected".equals(known.status());
        if (known != null && !(flaw == Flaw.EXECUTES_TWICE_PER_KEY) && !(rejectedBefore && flaw == Flaw.FORGETS_REJECTIONS)) {
            answer(exchange, rejectedBefore ? 422 : 200, view(key, known));
            return;
        }
        if (body.contains("\"amount\":" + REJECTED_AMOUNT + ",") && known == null) {
            Payment rejected = new Payment("rejected", 0, Instant.now());
            payments.put(key, rejected);
            answer(exchange, 422, view(key, rejected));
            return;
        }
        Payment executed = new Payment("completed", (known == null ? 0 : known.executions()) + 1, Instant.now());
        payments.put(key, executed);
        answer(exchange, 201, view(key, executed));
    }

    private void lookup(HttpExchange exchange, String key) throws IOException {
        Payment known = payments.get(key);
        boolean hidden = flaw == Flaw.LOOKUP_LIES
                || (flaw == Flaw.LOOKUP_LAGS && known != null && known.at().plusMillis(LAG_MS).isAfter(Instant.now()));
        if (known == null || hidden) {
            answer(exchange, 404, null);
        } else {
            answer(exchange, 200, view(key, known));
        }
    }

    private static String view(String key, Payment p) {
        return "{\"reference\":\"" + key + "\",\"status\":\"" + p.status() + "\",\"executions\":" + p.executions() + "}";
    }

    private static void answer(HttpExchange exchange, int status, String json) throws IOException {
        if (json == null) {
            exchange.sendResponseHeaders(status, -1);
            return;
        }
        byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length);
        exchange.getResponseBody().write(bytes);
    }

    @Override
    public void close() {
        server.stop(0);
        ((java.util.concurrent.ExecutorService) server.getExecutor()).shutdownNow();
    }
}
