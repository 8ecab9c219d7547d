package dev.ledgerline.bench;

import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;


/**
 * The payment provider, zero latency, on 127.0.0.1:PORT, speaking the contract the service's provider client
 * uses (provider/ProviderHttp): {@code POST /provider/payments} with {@code Idempotency-Key} →
 * 201 {@code {"reference","status":"completed","executions":n}}; {@code GET /provider/payments/{ref}} → 200 or 404.
 *
 * <p>Every POST counts as an execution of its reference (like the sandbox with {@code idempotent:false}),
 * so any reference sent twice shows up in {@code GET /provider/stats} as a duplicate. {@code PUT /provider/down}
 * starts an outage (every send and lookup answers 503, nothing executes), {@code DELETE /provider/down} ends it.
 */
final class ProviderStandIn {

    private static final ConcurrentHashMap<String, AtomicInteger> EXECUTIONS = new ConcurrentHashMap<>();
    private static final LongAdder SENDS = new LongAdder();
    private static final LongAdder DUPLICATES = new LongAdder();
    private static final LongAdder LOOKUPS = new LongAdder();
    /** An outage: while set, every send and lookup is answered 503 and nothing executes. */
    private static volatile boolean down;

    public static void main(String[] args) {
        int port = Integer.parseInt(args[0]);
        Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1).setWorkerPoolSize(1));
        vertx.createHttpServer().requestHandler(ProviderStandIn::handle)
                .listen(port, "127.0.0.1")
                .toCompletionStage().toCompletableFuture().join();
        System.out.println("provider stand-in on 127.0.0.1:" + port);
    }

    private static void handle(HttpServerRequest req) {
        String path = req.path();
        if (path.equals("/provider/down")) {
            // PUT starts an outage, DELETE ends it (bench/recovery.sh accumulates a backlog this way)
            down = req.method() == HttpMethod.PUT;
            answer(req, 200, "{\"down\":" + down + "}");
            return;
        }
        if (down && path.startsWith("/provider/payments")) {
            answer(req, 503, "{\"status\":\"unavailable\"}");
            return;
        }
        if (path.equals("/provider/stats")) {
            answer(req, 200, "{\"payments\":" + EXECUTIONS.size() + ",\"executions\":" + SENDS.sum()
                    + ",\"duplicateExecutions\":" + DUPLICATES.sum() + ",\"lookups\":" + LOOKUPS.sum() + "}");
            return;
        }
        if (req.method() == HttpMethod.POST && path.equals("/provider/payments")) {
            String reference = req.getHeader("Idempotency-Key");
            if (reference == null || reference.isBlank()) {
                answer(req, 400, "{\"status\":\"rejected\",\"reason\":\"missing Idempotency-Key\"}");
                return;
            }
            SENDS.increment();
            int n = EXECUTIONS.computeIfAbsent(reference, r -> new AtomicInteger()).incrementAndGet();
            if (n > 1) {
                DUPLICATES.increment();
            }
            answer(req, 201, payment(reference, n));
            return;
        }
        if (req.method() == HttpMethod.GET && path.startsWith("/provider/payments/")) {
            LOOKUPS.increment();
            String reference = path.substring("/provider/payments/".length());
            AtomicInteger n = EXECUTIONS.get(reference);
            if (n == null) {
                answer(req, 404, "{\"status\":\"not_found\"}");
            } else {
                answer(req, 200, payment(reference, n.get()));
            }
            return;
        }
        answer(req, 405, "{}");
    }

    private static String payment(String reference, int executions) {
        return "{\"reference\":\"" + reference + "\",\"status\":\"completed\",\"executions\":" + executions + "}";
    }

    /** Answers once the request body has arrived (it is not needed: the reference is the idempotency key). */
    private static void answer(HttpServerRequest req, int status, String json) {
        req.end().onComplete(ignored -> req.response().setStatusCode(status)
                .putHeader("Content-Type", "application/json").end(json));
    }
}
