package dev.ledgerline.transfers.provider;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.ThreadExecutorMap;
import io.quarkus.tls.TlsConfiguration;
import io.quarkus.tls.TlsConfigurationRegistry;
import io.quarkus.tls.runtime.config.TlsConfigUtils;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Singleton;
import io.smallrye.config.ConfigValue;
import io.smallrye.config.SmallRyeConfig;
import org.eclipse.microprofile.config.Config;

import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code provider-api.yaml}'s two requests on Vert.x's HTTP client: {@code POST /payments} and
 * {@code GET /payments/{reference}}, with the configured headers on each ({@link ProviderEndpoint}). It does what the
 * REST client and its two filters did, in the order they did it, for a fraction of the CPU (bench/CPU-AB.md):
 * <ul>
 *   <li>a send whose {@code Ledgerline-Not-After} deadline has passed is not written: checked once the request has
 *       its connection, the last moment before its bytes leave, and failed with {@link SendNotWrittenException}.
 *       A send that waited for a turn in the bulkhead ({@link ProviderGuards}) may get it late. The provider enforces the same
 *       deadline on arrival: this check only spares it sends certain to be refused, and providers that ignore the
 *       header;</li>
 *   <li>every answer's {@code Date} header goes to {@link ProviderClock} with the moment the request was written and
 *       the round trip to the answer's head; an answer without a readable {@code Date} is not a sample;</li>
 *   <li>a caller that stops waiting (the guards' timeout, {@link ProviderGuards}) resets the request: its connection is
 *       closed, nothing more is read. It does not call the send back: what was written may still execute, which is
 *       why a timeout is unknown.</li>
 * </ul>
 * <p>Each event loop has a client of its own, each keeping up to {@code connection-pool-size} connections, and a request
 * goes through the client of the loop it starts on, so its connection lives on that loop: Vert.x's client lends the
 * connection used last, whatever loop it lives on, and a request on another loop's connection was handed to that loop
 * and its answer handed back (bench/CPU-AB.md, "Each loop's provider connections"). The bulkheads bound the calls in
 * flight, so at most {@code max-concurrent} connections per kind are busy at once, whichever loops hold them; idle
 * ones close after Vert.x's keep-alive timeout. A thread that is no event loop uses one more client, shared.
 *
 * <p>Any answer, whatever its status, is an {@link Answer}; a failed {@code Uni} is a request that got none.
 */
@Singleton
public class ProviderHttp {

    /** The settings under {@code quarkus.rest-client.provider.} this client reads; headers are {@code headers.<name>}. */
    static final Set<String> SETTINGS = Set.of("url", "uri", "connect-timeout", "read-timeout", "connection-pool-size",
            "tls-configuration-name");

    private static final String PREFIX = "quarkus.rest-client.provider.";
    private static final String ENV_PREFIX = "QUARKUS_REST_CLIENT_PROVIDER_";
    /** Sources at or below this ordinal hold defaults, not settings (MicroProfile Config's lowest for a source is 0). */
    private static final int DEFAULTS_ORDINAL = -1;
    private static final CharSequence IDEMPOTENCY_KEY = HttpHeaders.createOptimized("Idempotency-Key");
    /** The send's deadline (RFC 3339); see {@link PaymentOrder#notAfter()}. */
    private static final CharSequence NOT_AFTER = HttpHeaders.createOptimized("Ledgerline-Not-After");
    private static final CharSequence JSON = HttpHeaders.createOptimized("application/json");

    /** One answer: its status and its whole body. */
    public record Answer(int status, Buffer body) {
    }

    /** Each event loop's own client, by loop: read-only once built. */
    private final Map<EventExecutor, HttpClient> perLoop;
    /** The client of threads that are no event loop (start-up, workers). */
    private final HttpClient shared;
    private final ProviderClock clock;
    private final String payments;
    private final Map<String, String> headers;
    private final long readTimeoutMs;

    public ProviderHttp(Vertx vertx, ProviderEndpoint endpoint, ProviderClock clock, TlsConfigurationRegistry tls, Config config) {
        List<String> refused = unsupported(setByOperator(config));
        if (!refused.isEmpty()) {
            throw new IllegalStateException("the provider's client does not read " + String.join(", ", refused)
                    + "; it reads quarkus.rest-client.provider." + String.join(", .", SETTINGS.stream().sorted().toList())
                    + " and .headers.<name> (docs/provider.md)");
        }
        String base = endpoint.url().or(endpoint::uri).orElseThrow(() -> new IllegalStateException(
                "quarkus.rest-client.provider.url is not set: the payment provider's base URL (QUARKUS_REST_CLIENT_PROVIDER_URL)"));
        URI uri = parse(base);
        boolean https = uri.getScheme().equalsIgnoreCase("https");
        HttpClientOptions options = new HttpClientOptions()
                .setDefaultHost(uri.getHost())
                .setDefaultPort(uri.getPort() != -1 ? uri.getPort() : https ? 443 : 80)
                .setSsl(https)
                .setConnectTimeout((int) Math.min(Integer.MAX_VALUE, endpoint.connectTimeout()))
                .setMaxPoolSize(endpoint.connectionPoolSize())
                .setKeepAlive(true)
                .setMaxRedirects(0)
                .setName("provider");
        endpoint.tlsConfigurationName().ifPresent(name -> tls.get(name).orElseThrow(() -> new IllegalStateException(
                "quarkus.rest-client.provider.tls-configuration-name=" + name + ", but no quarkus.tls." + name + ".* is configured")));
        if (https) {
            TlsConfiguration.from(tls, endpoint.tlsConfigurationName()).ifPresent(t -> TlsConfigUtils.configure(options, t));
        } else if (endpoint.tlsConfigurationName().isPresent()) {
            throw new IllegalStateException("quarkus.rest-client.provider.tls-configuration-name is set, but the provider's URL "
                    + base + " is not https");
        }
        String path = uri.getRawPath() == null ? "" : uri.getRawPath();
        this.payments = (path.endsWith("/") ? path.substring(0, path.length() - 1) : path) + "/payments";
        this.headers = Map.copyOf(endpoint.headers());
        this.readTimeoutMs = endpoint.readTimeout();
        this.clock = clock;
        this.shared = vertx.createHttpClient(options);
        Map<EventExecutor, HttpClient> loops = new IdentityHashMap<>();
        for (EventExecutor loop : vertx.nettyEventLoopGroup()) {
            loops.put(loop, vertx.createHttpClient(options));
        }
        this.perLoop = loops;
    }

    @PreDestroy
    void close() {
        perLoop.values().forEach(HttpClient::close);
        shared.close();
    }

    /** The calling event loop's client, or the shared one off the loops. */
    private HttpClient client() {
        HttpClient own = perLoop.get(ThreadExecutorMap.currentExecutor());
        return own != null ? own : shared;
    }

    /** {@code POST /payments}: {@code body} is the send's JSON; not written once {@code notAfter} has passed. */
    public Uni<Answer> send(String reference, Instant notAfter, byte[] body) {
        RequestOptions request = request(HttpMethod.POST, payments);
        request.putHeader(HttpHeaders.CONTENT_TYPE, JSON)
                .putHeader(IDEMPOTENCY_KEY, reference)
                .putHeader(NOT_AFTER, notAfter.toString());
        return exchange(request, Buffer.buffer(body), notAfter);
    }

    /** {@code GET /payments/{reference}}. */
    public Uni<Answer> lookup(String reference) {
        return exchange(request(HttpMethod.GET, payments + "/" + segment(reference)), null, null);
    }

    private RequestOptions request(HttpMethod method, String path) {
        RequestOptions request = new RequestOptions().setMethod(method).setURI(path).setIdleTimeout(readTimeoutMs)
                .setFollowRedirects(false);
        request.putHeader(HttpHeaders.ACCEPT, JSON);
        headers.forEach(request::putHeader);
        return request;
    }

    private Uni<Answer> exchange(RequestOptions options, Buffer body, Instant notAfter) {
        return Uni.createFrom().emitter(em -> {
            AtomicReference<HttpClientRequest> inFlight = new AtomicReference<>();
            AtomicBoolean over = new AtomicBoolean(); // answered, or the caller stopped waiting
            em.onTermination(() -> {
                HttpClientRequest request = inFlight.get();
                if (over.compareAndSet(false, true) && request != null) {
                    request.reset(); // the caller stopped waiting: close the connection, read nothing more
                }
            });
            client().request(options).onComplete(connected -> {
                if (connected.failed()) {
                    em.fail(connected.cause());
                    return;
                }
                HttpClientRequest request = connected.result();
                inFlight.set(request);
                if (over.get()) {
                    request.reset(); // the caller left while the connection was coming
                    return;
                }
                Instant sentAt = Instant.now(); // the deadline's check and the clock's sample read one instant
                if (notAfter != null && sentAt.isAfter(notAfter)) {
                    request.reset(); // nothing of it was written: Vert.x writes the head with the first write
                    em.fail(new SendNotWrittenException("the send's deadline " + notAfter + " passed before it was written"));
                    return;
                }
                long sentNanos = System.nanoTime();
                (body == null ? request.send() : request.send(body)).compose(response -> {
                    long roundTrip = System.nanoTime() - sentNanos;
                    Instant date = httpDate(response.getHeader(HttpHeaders.DATE));
                    if (date != null) {
                        clock.record(date, sentAt, Duration.ofNanos(roundTrip));
                    }
                    int status = response.statusCode();
                    return response.body().map(bytes -> new Answer(status, bytes));
                }).onComplete(answer -> {
                    over.set(true);
                    if (answer.succeeded()) {
                        em.complete(answer.result());
                    } else {
                        em.fail(answer.cause());
                    }
                });
            });
        });
    }

    /** An HTTP date (IMF-fixdate, or its RFC 1123 cousins), or {@code null}. */
    static Instant httpDate(String header) {
        if (header == null || header.isBlank()) {
            return null;
        }
        try {
            return ZonedDateTime.parse(header.trim(), DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
        } catch (DateTimeParseException unreadable) {
            return null;
        }
    }

    /**
     * The names {@code config} has a value for from a source someone wrote (a file, the environment, a system
     * property): not the defaults Quarkus's REST-client settings put in for every name they know.
     */
    private static List<String> setByOperator(Config config) {
        List<String> names = new ArrayList<>();
        SmallRyeConfig smallRye = config.unwrap(SmallRyeConfig.class);
        for (String name : config.getPropertyNames()) {
            if (name.startsWith("quarkus.rest-client.") || name.startsWith("QUARKUS_REST_CLIENT_")) {
                ConfigValue value = smallRye.getConfigValue(name);
                if (value.getValue() != null && value.getSourceOrdinal() > DEFAULTS_ORDINAL) {
                    names.add(name);
                }
            }
        }
        return names;
    }

    /**
     * The REST-client settings among {@code names} that this client does not read, as written (a property file's
     * dotted name or an environment variable's): any {@code quarkus.rest-client.*} setting but the provider's own
     * ({@link #SETTINGS} and its headers), since the service has no other client they could be for; the quoted form
     * {@code quarkus.rest-client."provider".*} too, which {@link ProviderEndpoint} would not see.
     */
    static List<String> unsupported(Iterable<String> names) {
        List<String> refused = new ArrayList<>();
        for (String name : names) {
            String setting;
            if (name.startsWith(PREFIX)) {
                setting = name.substring(PREFIX.length());
            } else if (name.startsWith(ENV_PREFIX)) {
                setting = name.substring(ENV_PREFIX.length()).toLowerCase(Locale.ROOT).replace('_', '-');
            } else if (name.startsWith("quarkus.rest-client.") || name.startsWith("QUARKUS_REST_CLIENT_")) {
                refused.add(name);
                continue;
            } else {
                continue;
            }
            if (!SETTINGS.contains(setting) && !setting.startsWith("headers.") && !setting.startsWith("headers-")) {
                refused.add(name);
            }
        }
        refused.sort(null);
        return refused;
    }

    private static URI parse(String base) {
        try {
            URI uri = new URI(base);
            if (uri.getScheme() == null || uri.getHost() == null
                    || !(uri.getScheme().equalsIgnoreCase("http") || uri.getScheme().equalsIgnoreCase("https"))
                    || uri.getRawQuery() != null || uri.getRawFragment() != null || uri.getRawUserInfo() != null) {
                throw new IllegalStateException("quarkus.rest-client.provider.url must be an http or https URL with a host and no"
                        + " query, fragment or user: " + base);
            }
            return uri;
        } catch (URISyntaxException e) {
            throw new IllegalStateException("quarkus.rest-client.provider.url is not a URL: " + base, e);
        }
    }

    /** {@code text} as one path segment, every character but the unreserved ones percent-encoded. */
    static String segment(String text) {
        return URLEncoder.encode(text, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
