package dev.ledgerline.transfers.provider;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsExchange;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.cert.X509Certificate;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;

/**
 * A provider that answers what a test tells it to, per reference, and records every request it gets —
 * so a test can see exactly what the service's own provider client puts on the wire, and how it reads
 * each answer. Started as a Quarkus test resource; the service's provider URL points at it, with a
 * bearer token configured the way an operator would ({@code quarkus.rest-client.provider.headers}).
 */
public class RecordingProvider implements QuarkusTestResourceLifecycleManager {

    static final String TOKEN = "Bearer conformance-token";

    /**
     * One request as it arrived; header names lower-cased; {@code client} is the subject of the certificate the
     * client presented over TLS, or {@code null}.
     */
    public record Recorded(String method, String path, Map<String, String> headers, String body, String client) {
    }

    /** What to answer: a status and an optional JSON body. */
    public record Scripted(int status, String json) {
    }

    private static volatile RecordingProvider current;

    private final List<Recorded> recorded = new CopyOnWriteArrayList<>();
    private final Map<String, Scripted> answers = new ConcurrentHashMap<>();
    private HttpServer server;

    public static RecordingProvider current() {
        return current;
    }

    @Override
    public Map<String, String> start() {
        try {
            server = create();
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
        server.createContext("/", this::handle);
        server.setExecutor(Executors.newFixedThreadPool(4));
        server.start();
        current = this;
        // the test profile's 1 s provider timeout is for the pipeline tests; a first call on a busy machine
        // (client start-up, cold code) can take longer, and this test is about what is sent and read, not timing
        Map<String, String> settings = new HashMap<>(Map.of(
                "quarkus.rest-client.provider.url", "http://127.0.0.1:" + server.getAddress().getPort(),
                "quarkus.rest-client.provider.headers.Authorization", TOKEN,
                "ledgerline.provider.timeout-ms", "5000",
                "ledgerline.pipeline.lease", "PT10S",
                "ledgerline.pipeline.lock-ttl", "PT10S"));
        settings.putAll(settings(server.getAddress().getPort()));
        return settings;
    }

    /** The server, on a free port of 127.0.0.1. */
    protected HttpServer create() throws IOException, GeneralSecurityException {
        return HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    }

    /** Settings beyond (or instead of) the plain ones, for the server on {@code port}. */
    protected Map<String, String> settings(int port) {
        return Map.of();
    }

    @Override
    public void stop() {
        current = null;
        if (server != null) {
            server.stop(0);
            ((java.util.concurrent.ExecutorService) server.getExecutor()).shutdownNow();
        }
    }

    /** The next send or lookup of {@code reference} gets this answer (it stays until replaced). */
    public void answer(String reference, int status, String json) {
        answers.put(reference, new Scripted(status, json));
    }

    /** Every request about {@code reference}: sends carry it in Idempotency-Key, lookups in the path. */
    public List<Recorded> requestsFor(String reference) {
        return recorded.stream().filter(r -> reference.equals(r.headers().get("idempotency-key"))
                || r.path().endsWith("/" + reference)).toList();
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            Map<String, String> headers = new TreeMap<>();
            exchange.getRequestHeaders().forEach((name, values) -> headers.put(name.toLowerCase(Locale.ROOT), values.get(0)));
            String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            String path = exchange.getRequestURI().getRawPath();
            String client = exchange instanceof HttpsExchange tls && tls.getSSLSession().getPeerCertificates()[0]
                    instanceof X509Certificate certificate ? certificate.getSubjectX500Principal().getName() : null;
            recorded.add(new Recorded(exchange.getRequestMethod(), path, headers, body, client));
            String reference = headers.containsKey("idempotency-key") ? headers.get("idempotency-key")
                    : path.substring(path.lastIndexOf('/') + 1);
            Scripted answer = answers.getOrDefault(reference, new Scripted(404, null));
            if (answer.json() == null) {
                exchange.sendResponseHeaders(answer.status(), -1);
                return;
            }
            byte[] bytes = answer.json().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(answer.status(), bytes.length);
            exchange.getResponseBody().write(bytes);
        }
    }
}
