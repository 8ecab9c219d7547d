package dev.ledgerline.transfers.provider;

import io.smallrye.config.SmallRyeConfigBuilder;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.HttpServer;
import io.vertx.core.impl.VertxInternal;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A provider request goes out on a connection of the event loop it starts on. Against a real HTTP server that notes
 * which connection (the client's port) each request came on: requests started one after the other on four loops
 * never arrive on a connection another loop's requests used. One client shared by the loops lends the connection used
 * last whatever its loop: there, the four loops' requests went out on the same three connections.
 */
class ProviderHttpLoopsTest {

    private static final int LOOPS = 4;
    private static final int PER_LOOP = 5;

    private Vertx vertx;
    private HttpServer server;
    private ProviderHttp http;
    /** The client port of each request, in arrival order, with the reference it asked for. */
    private final ConcurrentLinkedQueue<String[]> arrivals = new ConcurrentLinkedQueue<>();

    @BeforeEach
    void start() throws Exception {
        vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(LOOPS));
        server = vertx.createHttpServer().requestHandler(request -> {
            String path = request.path();
            arrivals.add(new String[] {path.substring(path.lastIndexOf('/') + 1),
                    Integer.toString(request.connection().remoteAddress().port())});
            request.response().setStatusCode(404).end();
        }).listen(0, "127.0.0.1").toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        http = new ProviderHttp(vertx, endpoint("http://127.0.0.1:" + server.actualPort()), new ProviderClock(), null,
                new SmallRyeConfigBuilder().build());
    }

    @AfterEach
    void stop() throws Exception {
        http.close();
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    @Test
    void eachLoopsRequestsGoOutOnThatLoopsConnections() throws Exception {
        Context[] contexts = new Context[LOOPS];
        Set<Thread> threads = new HashSet<>();
        for (int loop = 0; loop < LOOPS; loop++) {
            contexts[loop] = ((VertxInternal) vertx).createEventLoopContext(); // the loops in turn
            CompletableFuture<Thread> thread = new CompletableFuture<>();
            contexts[loop].runOnContext(ignored -> thread.complete(Thread.currentThread()));
            threads.add(thread.get(10, TimeUnit.SECONDS));
        }
        assertEquals(LOOPS, threads.size(), "the contexts were not on " + LOOPS + " loops");
        for (int round = 0; round < PER_LOOP; round++) {
            for (int loop = 0; loop < LOOPS; loop++) {
                String reference = "loop" + loop;
                CompletableFuture<Integer> answered = new CompletableFuture<>();
                contexts[loop].runOnContext(ignored -> http.lookup(reference).subscribe()
                        .with(a -> answered.complete(a.status()), answered::completeExceptionally));
                assertEquals(404, answered.get(10, TimeUnit.SECONDS)); // one request at a time: the last one's connection is free
            }
        }

        Map<String, Set<String>> portsByLoop = new HashMap<>();
        for (String[] arrival : arrivals) {
            portsByLoop.computeIfAbsent(arrival[0], k -> new HashSet<>()).add(arrival[1]);
        }
        assertEquals(LOOPS, portsByLoop.size());
        Set<String> seen = new HashSet<>();
        for (Map.Entry<String, Set<String>> loop : portsByLoop.entrySet()) {
            for (String port : loop.getValue()) {
                assertTrue(seen.add(port), "connection " + port + " carried requests of two loops: " + portsByLoop);
            }
        }
    }

    private static ProviderEndpoint endpoint(String url) {
        return new ProviderEndpoint() {
            @Override
            public Optional<String> url() {
                return Optional.of(url);
            }

            @Override
            public Optional<String> uri() {
                return Optional.empty();
            }

            @Override
            public long connectTimeout() {
                return 2000;
            }

            @Override
            public long readTimeout() {
                return 5000;
            }

            @Override
            public int connectionPoolSize() {
                return 8;
            }

            @Override
            public Map<String, String> headers() {
                return Map.of();
            }

            @Override
            public Optional<String> tlsConfigurationName() {
                return Optional.empty();
            }
        };
    }
}
