package dev.ledgerline.transfers.webhooks;

import dev.ledgerline.transfers.config.LedgerlineConfig;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.net.SocketAddress;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;

import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Sends one webhook with Vert.x's non-blocking HTTP client (what the Vert.x WebClient wraps; used directly so the
 * answer's body is read only up to {@code max-response-bytes}). The host is resolved off the event loop, every
 * address it resolves to must pass the {@link UrlPolicy}, and the request goes to the address that was checked
 * (with the URL's host in {@code Host} and in TLS SNI and host verification), so a DNS answer that changes between
 * the check and the connect cannot point the request elsewhere. Redirects are not followed (a 3xx is a failure),
 * and the whole exchange, connect included, must end within {@code request-timeout}.
 */
@ApplicationScoped
public class WebhookSender {

    /** How one attempt ended: a status code (none when no answer came) or what went wrong. */
    public record Outcome(Integer status, long latencyMs, String error) {
        public boolean delivered() {
            return status != null && status >= 200 && status < 300;
        }
    }

    private final Vertx vertx;
    private final HttpClient client;
    private final UrlPolicy policy;
    private final Duration timeout;
    private final int maxResponseBytes;

    public WebhookSender(Vertx vertx, LedgerlineConfig config) {
        LedgerlineConfig.Webhooks settings = config.webhooks();
        this.vertx = vertx;
        this.policy = new UrlPolicy(settings.allowHttp(), settings.allowPrivateHosts());
        this.timeout = settings.requestTimeout();
        this.maxResponseBytes = settings.maxResponseBytes();
        this.client = vertx.createHttpClient(new HttpClientOptions()
                .setConnectTimeout((int) Math.min(Integer.MAX_VALUE, timeout.toMillis()))
                .setForceSni(true)
                .setVerifyHost(true)
                .setKeepAlive(true)
                .setMaxPoolSize(8)
                .setIdleTimeout(30)
                .setMaxRedirects(0));
    }

    public UrlPolicy policy() {
        return policy;
    }

    @PreDestroy
    void close() {
        client.close();
    }

    /**
     * The first address of {@code uri}'s host, after every address it resolves to passed the policy;
     * {@link RefusedAddressException} when one does not. Resolved on a worker thread (the JDK resolver blocks).
     */
    public Uni<InetAddress> resolve(URI uri) {
        String host = UrlPolicy.host(uri);
        return Uni.createFrom().<InetAddress[]>emitter(em -> vertx.<InetAddress[]>executeBlocking(() -> InetAddress.getAllByName(host), false)
                        .onComplete(ar -> {
                            if (ar.succeeded()) {
                                em.complete(ar.result());
                            } else {
                                em.fail(ar.cause());
                            }
                        }))
                .onFailure(UnknownHostException.class).transform(e -> new RefusedAddressException("does not resolve: " + host))
                .map(addresses -> {
                    for (InetAddress address : addresses) {
                        Optional<String> refusal = policy.refusal(address);
                        if (refusal.isPresent()) {
                            throw new RefusedAddressException(refusal.get());
                        }
                    }
                    return addresses[0];
                });
    }

    /** POSTs {@code body} with {@code headers}; never fails, every failure is an {@link Outcome}. */
    public Uni<Outcome> send(String url, String body, java.util.Map<String, String> headers) {
        long started = System.nanoTime();
        URI uri;
        try {
            uri = policy.parse(url);
        } catch (IllegalArgumentException e) {
            return Uni.createFrom().item(new Outcome(null, 0, "url " + e.getMessage()));
        }
        AtomicReference<HttpClientRequest> inFlight = new AtomicReference<>();
        return resolve(uri)
                .flatMap(address -> post(uri, address, body, headers, inFlight))
                .ifNoItem().after(timeout).failWith(() -> new TimeoutException("no answer within " + timeout))
                .map(status -> new Outcome(status.code, elapsed(started), status.code >= 200 && status.code < 300 ? null
                        : "HTTP " + status.code + (status.text.isEmpty() ? "" : ": " + status.text)))
                .onFailure().recoverWithItem(e -> {
                    HttpClientRequest request = inFlight.get();
                    if (request != null) {
                        request.reset(); // a timed-out exchange closes its connection; nothing more is read from it
                    }
                    return new Outcome(null, elapsed(started), describe(e));
                });
    }

    private record Status(int code, String text) {
    }

    private Uni<Status> post(URI uri, InetAddress address, String body, java.util.Map<String, String> headers,
                             AtomicReference<HttpClientRequest> inFlight) {
        boolean https = uri.getScheme().equalsIgnoreCase("https");
        int port = UrlPolicy.port(uri);
        String path = (uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath())
                + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
        RequestOptions options = new RequestOptions()
                .setMethod(HttpMethod.POST)
                .setServer(SocketAddress.inetSocketAddress(port, address.getHostAddress()))
                .setHost(UrlPolicy.host(uri))
                .setPort(port)
                .setSsl(https)
                .setURI(path)
                .setFollowRedirects(false)
                .putHeader("Content-Type", "application/json")
                .putHeader("User-Agent", "Ledgerline-Webhooks/1");
        headers.forEach(options::putHeader);
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        return Uni.createFrom().emitter(em -> client.request(options)
                .compose(request -> {
                    inFlight.set(request);
                    return request.send(Buffer.buffer(bytes));
                })
                .onComplete(ar -> {
                    if (ar.failed()) {
                        em.fail(ar.cause());
                        return;
                    }
                    var response = ar.result();
                    Buffer kept = Buffer.buffer();
                    response.handler(chunk -> {
                        if (kept.length() < maxResponseBytes) {
                            kept.appendBuffer(chunk.length() <= maxResponseBytes - kept.length() ? chunk
                                    : chunk.getBuffer(0, maxResponseBytes - kept.length()));
                        } else {
                            // enough: the rest is not read; closing the connection ends the answer
                            response.request().reset();
                            em.complete(new Status(response.statusCode(), text(kept)));
                        }
                    });
                    response.exceptionHandler(e -> em.complete(new Status(response.statusCode(), text(kept))));
                    response.endHandler(v -> em.complete(new Status(response.statusCode(), text(kept))));
                }));
    }

    private static String text(Buffer body) {
        String s = body.toString(StandardCharsets.UTF_8).strip();
        return s.length() > 200 ? s.substring(0, 200) : s;
    }

    private static long elapsed(long started) {
        return Duration.ofNanos(System.nanoTime() - started).toMillis();
    }

    private static String describe(Throwable e) {
        if (e instanceof RefusedAddressException) {
            return "address refused: " + e.getMessage();
        }
        if (e instanceof TimeoutException) {
            return "timeout: " + e.getMessage();
        }
        String message = e.getMessage() == null ? "" : ": " + e.getMessage();
        return e.getClass().getSimpleName() + message;
    }

    /** The URL's host resolves to an address the policy refuses, or to none. */
    public static final class RefusedAddressException extends RuntimeException {
        public RefusedAddressException(String message) {
            super(message, null, false, false);
        }
    }
}
