package dev.ledgerline.transfers.clients;

import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.RequestOptions;

import java.net.URI;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * A stand-in for a bad network and a busy service in front of the real API: each {@code POST /v1/transfers}
 * takes the next scripted {@link Fault} (503 with Retry-After, 409 with Retry-After, or a connection dropped
 * after the service answered), and everything else passes through untouched. Every request is recorded with
 * the time it arrived, so a test can check the keys a client sent and the waits it kept.
 */
final class FaultyFront implements AutoCloseable {

    /** What the front does with one POST. */
    enum Fault { SERVICE_UNAVAILABLE, KEY_IN_USE, DROP_AFTER_SERVICE_ANSWERED, PASS }

    /** One request as the front saw it. */
    record Attempt(long arrivedNanos, String method, String path, String idempotencyKey, String ifNoneMatch, String prefer,
                   Fault fault, int serviceStatus) {
    }

    private final Vertx vertx = Vertx.vertx();
    private final URI service;
    private final Queue<Fault> script = new ArrayDeque<>();
    private HttpMethod scriptedMethod = HttpMethod.POST;
    private String scriptedPath = "/v1/transfers";
    private final List<Attempt> attempts = new CopyOnWriteArrayList<>();
    private final int retryAfterUnavailable;
    private final int retryAfterInUse;
    private HttpClient client;
    private HttpServer server;

    private FaultyFront(URI service, int retryAfterUnavailable, int retryAfterInUse) {
        this.service = service;
        this.retryAfterUnavailable = retryAfterUnavailable;
        this.retryAfterInUse = retryAfterInUse;
    }

    /** A front for {@code service} whose 503s ask for {@code retryAfterUnavailable} s and 409s for {@code retryAfterInUse} s. */
    static FaultyFront start(URI service, int retryAfterUnavailable, int retryAfterInUse) throws Exception {
        FaultyFront front = new FaultyFront(service, retryAfterUnavailable, retryAfterInUse);
        front.client = front.vertx.createHttpClient();
        front.server = front.vertx.createHttpServer().requestHandler(front::handle)
                .listen(0, "127.0.0.1").toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        return front;
    }

    URI uri() {
        return URI.create("http://127.0.0.1:" + server.actualPort());
    }

    /** The faults the next POSTs meet, in order; after them every POST passes. */
    synchronized FaultyFront script(Fault... faults) {
        return script(HttpMethod.POST, "/v1/transfers", faults);
    }

    /** The faults the next requests of {@code method} to {@code path} meet, in order; every other request passes. */
    synchronized FaultyFront script(HttpMethod method, String path, Fault... faults) {
        scriptedMethod = method;
        scriptedPath = path;
        script.clear();
        script.addAll(List.of(faults));
        return this;
    }

    List<Attempt> attempts() {
        return List.copyOf(attempts);
    }

    private synchronized Fault next(HttpServerRequest request) {
        if (request.method() != scriptedMethod || !request.path().equals(scriptedPath)) {
            return Fault.PASS;
        }
        Fault fault = script.poll();
        return fault == null ? Fault.PASS : fault;
    }

    private void handle(HttpServerRequest request) {
        long arrived = System.nanoTime();
        Fault fault = next(request);
        request.body().onSuccess(body -> {
            switch (fault) {
                case SERVICE_UNAVAILABLE -> answer(request, arrived, fault, 503, retryAfterUnavailable, "unavailable");
                case KEY_IN_USE -> answer(request, arrived, fault, 409, retryAfterInUse, "idempotency-key-in-use");
                default -> forward(request, body, arrived, fault);
            }
        });
    }

    private void answer(HttpServerRequest request, long arrived, Fault fault, int status, int retryAfter, String type) {
        record(request, arrived, fault, 0);
        request.response().setStatusCode(status)
                .putHeader("Content-Type", "application/problem+json")
                .putHeader("Retry-After", String.valueOf(retryAfter))
                .end("{\"type\":\"https://ledgerline.dev/problems/" + type + "\",\"title\":\"scripted\",\"status\":" + status + "}");
    }

    private void forward(HttpServerRequest request, Buffer body, long arrived, Fault fault) {
        MultiMap headers = MultiMap.caseInsensitiveMultiMap().addAll(request.headers()).remove("Host").remove("Connection");
        RequestOptions options = new RequestOptions().setMethod(request.method()).setHost(service.getHost())
                .setPort(service.getPort()).setURI(request.uri()).setHeaders(headers).setTimeout(60_000);
        client.request(options)
                .compose(upstream -> upstream.send(body))
                .compose(upstream -> upstream.body().map(answer -> new Object[] {upstream, answer}))
                .onSuccess(pair -> {
                    HttpClientResponse upstream = (HttpClientResponse) pair[0];
                    record(request, arrived, fault, upstream.statusCode());
                    if (fault == Fault.DROP_AFTER_SERVICE_ANSWERED) {
                        // the service did the work; the client never hears of it
                        request.connection().close();
                        return;
                    }
                    request.response().setStatusCode(upstream.statusCode());
                    upstream.headers().forEach((name, value) -> {
                        if (!name.equalsIgnoreCase("Content-Length") && !name.equalsIgnoreCase("Transfer-Encoding")) {
                            request.response().headers().add(name, value);
                        }
                    });
                    request.response().end((Buffer) pair[1]);
                })
                .onFailure(e -> {
                    record(request, arrived, fault, -1);
                    request.connection().close();
                });
    }

    private void record(HttpServerRequest request, long arrived, Fault fault, int serviceStatus) {
        attempts.add(new Attempt(arrived, request.method().name(), request.path(), request.getHeader("Idempotency-Key"),
                request.getHeader("If-None-Match"), request.getHeader("Prefer"), fault, serviceStatus));
    }

    @Override
    public void close() throws Exception {
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
}
