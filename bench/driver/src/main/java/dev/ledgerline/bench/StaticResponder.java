package dev.ledgerline.bench;

import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;

/**
 * The calibration target: answers every request at once with a fixed transfer, the same size and headers as the
 * service's answer, over the same HTTP/1.1 keep-alive connections. {@code POST} gets {@code 201} (and
 * {@code Idempotent-Replayed: true} when the key starts with {@code --replay-prefix}), {@code GET} gets {@code 200}.
 * It does no work, so the rate the driver sustains against it is the driver's own limit on this machine (with the
 * responder's small share of the same cores counted against the driver, which only makes the limit conservative).
 */
final class StaticResponder {

    /** A transfer as the service writes it (field names and value lengths of TransferResponse). */
    static final String TRANSFER = "{\"id\":\"0b6f3c52-8f4e-4f4a-9d55-2f1a6c3e9b10\",\"status\":\"pending\",\"amount\":1250,"
            + "\"currency\":\"EUR\",\"destination\":{\"iban\":\"DE89370400440532013000\",\"name\":\"Ada Lovelace\"},"
            + "\"description\":\"bench\",\"failureReason\":null,\"version\":1,"
            + "\"createdAt\":\"2026-12-01T03:08:22.123456Z\",\"updatedAt\":\"2026-12-01T03:08:22.123456Z\"}";

    public static void main(String[] args) {
        int port = Integer.parseInt(args[0]);
        String replayPrefix = args.length > 1 ? args[1] : "seed-";
        Buffer body = Buffer.buffer(TRANSFER);
        CharSequence length = HttpHeaders.createOptimized(String.valueOf(body.length()));
        CharSequence json = HttpHeaders.createOptimized("application/json");
        CharSequence location = HttpHeaders.createOptimized("/v1/transfers/0b6f3c52-8f4e-4f4a-9d55-2f1a6c3e9b10");
        CharSequence etag = HttpHeaders.createOptimized("\"1\"");
        Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1).setWorkerPoolSize(1));
        vertx.createHttpServer(new HttpServerOptions().setTcpNoDelay(true))
                .requestHandler(req -> req.end().onComplete(ignored -> answer(req, body, length, json, location, etag, replayPrefix)))
                .listen(port, "127.0.0.1")
                .toCompletionStage().toCompletableFuture().join();
        System.out.println("static responder on 127.0.0.1:" + port + ", " + body.length() + "-byte body");
    }

    private static void answer(HttpServerRequest req, Buffer body, CharSequence length, CharSequence json,
                               CharSequence location, CharSequence etag, String replayPrefix) {
        MultiMap headers = req.response().headers();
        headers.add(HttpHeaders.CONTENT_TYPE, json).add(HttpHeaders.CONTENT_LENGTH, length).add(HttpHeaders.ETAG, etag);
        if (req.method() == HttpMethod.POST) {
            headers.add(HttpHeaders.LOCATION, location);
            String key = req.getHeader("Idempotency-Key");
            if (key != null && key.startsWith(replayPrefix)) {
                headers.add("Idempotent-Replayed", "true");
            }
            req.response().setStatusCode(201);
        }
        req.response().end(body);
    }

    private StaticResponder() {
    }
}
