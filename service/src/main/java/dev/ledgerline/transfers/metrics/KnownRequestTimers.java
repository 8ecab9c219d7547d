package dev.ledgerline.transfers.metrics;

import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.quarkus.arc.Arc;
import io.quarkus.arc.ArcContainer;
import io.quarkus.micrometer.runtime.HttpServerMetricsTagsContributor;
import io.quarkus.micrometer.runtime.binder.HttpBinderConfiguration;
import io.quarkus.micrometer.runtime.binder.HttpCommonTags;
import io.quarkus.micrometer.runtime.binder.vertx.HttpRequestMetric;
import io.quarkus.micrometer.runtime.binder.vertx.VertxMetricsTags;
import io.quarkus.micrometer.runtime.export.exemplars.NoopOpenTelemetryExemplarContextUnwrapper;
import io.quarkus.micrometer.runtime.export.exemplars.OpenTelemetryContextUnwrapper;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.core.net.SocketAddress;
import io.vertx.core.spi.metrics.HttpServerMetrics;
import io.vertx.core.spi.observability.HttpRequest;
import io.vertx.core.spi.observability.HttpResponse;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * The Quarkus binder's HTTP server meters, with the request timer of a successful answer found in a map instead of
 * looked up anew. For every answer the binder builds the timer's four tags, sorts them and asks the registry for the
 * meter (a new id, its tags merged and sorted again, the registry's map): 1–4 % of a new transfer's CPU samples and
 * 5 % of a replay's, most of the meters' share (bench/CPU-AB.md, "The request timer from a map"). Here a 2xx answer's
 * timer is found by its method, its route's path and its status, and the sample is stopped on it as the binder would
 * stop it.
 *
 * <p>Nothing of what the scrape shows changes: the binder records every answer this does not (every non-2xx status, a
 * first answer of each kind, and all of them when tags are contributed or exemplars taken), and this keeps only the
 * timer the binder registered for that answer, with exactly the four tags the binder gives it: a meter filter that
 * renames a tag, or a contributor's tag, leaves it unfound, and that kind of answer stays with the binder. Each
 * server's map holds at most {@link #MOST} kinds; later kinds stay with the binder too.
 */
final class KnownRequestTimers implements HttpServerMetrics<Object, Object, Object> {

    /** Kinds of answer kept per server: the routes' paths times their methods and 2xx statuses, with room to spare. */
    static final int MOST = 128;

    /** The methods a kind can have, by identity: the request's method is one of Vert.x's constants for these. */
    private static final HttpMethod[] METHODS = {HttpMethod.GET, HttpMethod.HEAD, HttpMethod.POST, HttpMethod.PUT,
            HttpMethod.DELETE, HttpMethod.PATCH, HttpMethod.OPTIONS, HttpMethod.TRACE, HttpMethod.CONNECT};

    /**
     * One kind of successful answer: the binder gives all answers of a kind the same timer. The method is its index in
     * {@link #METHODS}: Vert.x's {@code HttpMethod} hashes and compares by a name it converts to a new string each time.
     */
    private record Kind(int method, String path, int status) {

        @Override
        public boolean equals(Object other) {
            return other instanceof Kind kind && kind.method == method && kind.status == status && kind.path.equals(path);
        }

        @Override
        public int hashCode() {
            return (path.hashCode() * 31 + method) * 31 + status;
        }
    }

    private final HttpServerMetrics<Object, Object, Object> binder;
    private final Map<Kind, Timer> timers = new ConcurrentHashMap<>();
    /** The binder's settings as the running application's container gave them; null until the first successful answer. */
    private volatile Settings settings;

    /**
     * What answers are timed from the map under: the container the settings were read from (a live reload in dev mode
     * starts a new one, with a new registry's meters, on the same Vert.x and the same servers), and the binder's
     * settings, or none when answers stay with the binder.
     */
    private record Settings(ArcContainer container, String name, Map<Pattern, String> matchPatterns,
                            List<Pattern> ignorePatterns, boolean suppress4xx, boolean on) {
    }

    @SuppressWarnings("unchecked")
    KnownRequestTimers(HttpServerMetrics<?, ?, ?> binder) {
        this.binder = (HttpServerMetrics<Object, Object, Object>) binder;
    }

    @Override
    public void responseEnd(Object request, HttpResponse response, long bytesWritten) {
        int status = response.statusCode();
        Settings known = status >= 200 && status < 300 && request instanceof HttpRequestMetric ? settings() : null;
        if (known == null || !known.on()) {
            binder.responseEnd(request, response, bytesWritten);
            return;
        }
        HttpRequestMetric metric = (HttpRequestMetric) request;
        String path = metric.getNormalizedUriPath(known.matchPatterns(), known.ignorePatterns());
        Timer.Sample sample = metric.getSample();
        if (path == null || sample == null) {
            binder.responseEnd(request, response, bytesWritten);
            return;
        }
        int method = method(metric.request().method());
        Kind kind = method < 0 ? null : new Kind(method, path, status);
        Timer timer = kind == null ? null : timers.get(kind);
        if (timer == null) {
            binder.responseEnd(request, response, bytesWritten);
            if (kind != null) {
                learn(known, kind, metric, response);
            }
            return;
        }
        sample.stop(timer);
        metric.requestEnded();
    }

    /** After the binder recorded the first answer of {@code kind}: the timer it used, if it carries only its four tags. */
    private void learn(Settings known, Kind kind, HttpRequestMetric metric, HttpResponse response) {
        if (timers.size() >= MOST) {
            return;
        }
        Tags tags = Tags.of(VertxMetricsTags.method(METHODS[kind.method()]),
                HttpCommonTags.uri(kind.path(), metric.getInitialPath(), kind.status(), known.suppress4xx()),
                VertxMetricsTags.outcome(response), HttpCommonTags.status(kind.status()));
        for (Timer timer : Metrics.globalRegistry.find(known.name()).tags(tags).timers()) {
            // the search matched the four; a timer with no other tag is the binder's own
            if (timer.getId().getTags().size() == 4) {
                timers.putIfAbsent(kind, timer);
                return;
            }
        }
    }

    /** {@code method}'s index in {@link #METHODS}, or -1 for any other method (its answers stay with the binder). */
    private static int method(HttpMethod method) {
        for (int i = 0; i < METHODS.length; i++) {
            if (METHODS[i] == method) {
                return i;
            }
        }
        return -1;
    }

    /** The binder's settings under the running application's container, read again (and the map emptied) when it changes. */
    private Settings settings() {
        ArcContainer container = Arc.container();
        Settings read = settings;
        if (read == null || read.container() != container) {
            timers.clear();
            read = read(container);
            settings = read;
        }
        return read;
    }

    /**
     * Off when there is no container yet, or when the binder adds to a timer what this would not: a contributor's
     * tags, or an exemplar of the current trace (the unwrapper that is not the no-op one).
     */
    private static Settings read(ArcContainer container) {
        Settings off = new Settings(container, null, Map.of(), List.of(), false, false);
        if (container == null || !container.listAll(HttpServerMetricsTagsContributor.class).isEmpty()) {
            return off;
        }
        try (var unwrapper = container.instance(OpenTelemetryContextUnwrapper.class);
             var config = container.instance(HttpBinderConfiguration.class)) {
            if (!unwrapper.isAvailable() || !(unwrapper.get() instanceof NoopOpenTelemetryExemplarContextUnwrapper)
                    || !config.isAvailable()) {
                return off;
            }
            HttpBinderConfiguration binding = config.get();
            return new Settings(container, binding.getHttpServerRequestsName(), binding.getServerMatchPatterns(),
                    binding.getServerIgnorePatterns(), binding.isServerSuppress4xxErrors(), true);
        }
    }

    /** How many kinds of answer this server's map holds (tests). */
    int known() {
        return timers.size();
    }

    // everything else is the binder's

    @Override
    public Object requestBegin(Object socket, HttpRequest request) {
        return binder.requestBegin(socket, request);
    }

    @Override
    public void requestEnd(Object request, HttpRequest httpRequest, long bytesRead) {
        binder.requestEnd(request, httpRequest, bytesRead);
    }

    @Override
    public void requestReset(Object request) {
        binder.requestReset(request);
    }

    @Override
    public void responseBegin(Object request, HttpResponse response) {
        binder.responseBegin(request, response);
    }

    @Override
    public Object responsePushed(Object socket, HttpMethod method, String uri, HttpResponse response) {
        return binder.responsePushed(socket, method, uri, response);
    }

    @Override
    public Object connected(Object socket, Object request, ServerWebSocket webSocket) {
        return binder.connected(socket, request, webSocket);
    }

    @Override
    public void disconnected(Object webSocket) {
        binder.disconnected(webSocket);
    }

    @Override
    public void requestRouted(Object request, String route) {
        binder.requestRouted(request, route);
    }

    @Override
    public Object connected(SocketAddress remoteAddress, String remoteName) {
        return binder.connected(remoteAddress, remoteName);
    }

    @Override
    public void disconnected(Object socket, SocketAddress remoteAddress) {
        binder.disconnected(socket, remoteAddress);
    }

    @Override
    public void bytesRead(Object socket, SocketAddress remoteAddress, long numberOfBytes) {
        binder.bytesRead(socket, remoteAddress, numberOfBytes);
    }

    @Override
    public void bytesWritten(Object socket, SocketAddress remoteAddress, long numberOfBytes) {
        binder.bytesWritten(socket, remoteAddress, numberOfBytes);
    }

    @Override
    public void exceptionOccurred(Object socket, SocketAddress remoteAddress, Throwable t) {
        binder.exceptionOccurred(socket, remoteAddress, t);
    }

    @Override
    public void close() {
        binder.close();
    }
}
