package dev.ledgerline.bench;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * The payment provider, zero latency, on 127.0.0.1:PORT, speaking the contract the service's REST client
 * uses (provider/ProviderRestClient): {@code POST /provider/payments} with {@code Idempotency-Key} →
 * 201 {@code {"reference","status":"completed","executions":n}}; {@code GET /provider/payments/{ref}} → 200 or 404.
 *
 * <p>Every POST counts as an execution of its reference (like the sandbox with {@code idempotent:false}),
 * so any reference sent twice shows up in {@code GET /provider/stats} as a duplicate.
 */
final class ProviderStandIn {

    private static final ConcurrentHashMap<String, AtomicInteger> EXECUTIONS = new ConcurrentHashMap<>();
    private static final LongAdder SENDS = new LongAdder();
    private static final LongAdder DUPLICATES = new LongAdder();
    private static final LongAdder LOOKUPS = new LongAdder();

    public static void main(String[] args) throws IOException {
        int port = Integer.parseInt(args[0]);
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 1024);
        server.setExecutor(Executors.newFixedThreadPool(4));
        server.createContext("/provider/payments", ProviderStandIn::payments);
        server.createContext("/provider/stats", ex -> {
            drain(ex);
            answer(ex, 200, "{\"payments\":" + EXECUTIONS.size() + ",\"executions\":" + SENDS.sum()
                    + ",\"duplicateExecutions\":" + DUPLICATES.sum() + ",\"lookups\":" + LOOKUPS.sum() + "}");
        });
        server.start();
        System.out.println("provider stand-in on 127.0.0.1:" + port);
    }

    private static void payments(HttpExchange ex) throws IOException {
        drain(ex);
        String path = ex.getRequestURI().getPath();
        if ("POST".equals(ex.getRequestMethod()) && path.equals("/provider/payments")) {
            String reference = ex.getRequestHeaders().getFirst("Idempotency-Key");
            if (reference == null || reference.isBlank()) {
                answer(ex, 400, "{\"status\":\"rejected\",\"reason\":\"missing Idempotency-Key\"}");
                return;
            }
            SENDS.increment();
            int n = EXECUTIONS.computeIfAbsent(reference, r -> new AtomicInteger()).incrementAndGet();
            if (n > 1) {
                DUPLICATES.increment();
            }
            answer(ex, 201, payment(reference, n));
            return;
        }
        if ("GET".equals(ex.getRequestMethod()) && path.startsWith("/provider/payments/")) {
            LOOKUPS.increment();
            String reference = path.substring("/provider/payments/".length());
            AtomicInteger n = EXECUTIONS.get(reference);
            if (n == null) {
                answer(ex, 404, "{\"status\":\"not_found\"}");
            } else {
                answer(ex, 200, payment(reference, n.get()));
            }
            return;
        }
        answer(ex, 405, "{}");
    }

    private static String payment(String reference, int executions) {
        return "{\"reference\":\"" + reference + "\",\"status\":\"completed\",\"executions\":" + executions + "}";
    }

    private static void drain(HttpExchange ex) throws IOException {
        try (InputStream in = ex.getRequestBody()) {
            in.readAllBytes();
        }
    }

    private static void answer(HttpExchange ex, int status, String json) throws IOException {
        byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(bytes);
        }
    }

    private ProviderStandIn() {
    }
}
