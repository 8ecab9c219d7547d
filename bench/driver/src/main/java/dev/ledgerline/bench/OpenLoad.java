package dev.ledgerline.bench;

import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import org.HdrHistogram.Histogram;

import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;

/**
 * One open-model run (see {@link Driver#load}). Request <i>i</i> is due at {@code start + i/rate} whatever the earlier
 * answers did, and its latency is measured from that intended start (no coordinated omission).
 *
 * <p>Cheap on purpose, because it shares the cores with what it measures: the main thread only sleeps until the next
 * request is due and then hands every request that has come due to the event loop in one task; everything else
 * (sending, answers, histograms, counters) happens on that single event loop, so nothing is synchronised and there is
 * one thread hand-off per batch rather than per request. Requests go out as ready-made bytes through
 * {@link RawHttpClient}; {@code --client=vertx} uses Vert.x's HttpClient instead (about 1.5× the CPU per request
 * against the static responder), to cross-check the raw client's figures.
 */
final class OpenLoad {

    private static final CharSequence AUTHORIZATION = HttpHeaders.AUTHORIZATION;
    private static final CharSequence CONTENT_TYPE = HttpHeaders.CONTENT_TYPE;
    private static final CharSequence JSON = HttpHeaders.createOptimized("application/json");
    private static final CharSequence IDEMPOTENCY_KEY = HttpHeaders.createOptimized("Idempotency-Key");
    private static final CharSequence PREFER = HttpHeaders.createOptimized("Prefer");
    private static final CharSequence WAIT_2 = HttpHeaders.createOptimized("wait=2");
    private static final CharSequence IF_NONE_MATCH = HttpHeaders.IF_NONE_MATCH;
    private static final CharSequence VERSION_2 = HttpHeaders.createOptimized("\"2\"");
    private static final long TIMEOUT_MICROS = TimeUnit.SECONDS.toMicros(10);
    private static final long HIGHEST = TimeUnit.SECONDS.toMicros(60);

    final Vertx vertx;
    private final HttpClient http;
    private final RawHttpClient raw;
    private final Buffer postHead;
    /** The request line and headers of a new transfer, one per owner (--owners). */
    private final Buffer[] newPostHeads;
    private final Buffer postTail;
    private final Buffer getHead;
    private final Buffer getTail;
    private final Buffer longPollTail;
    private final Context loop;
    private final String host;
    private final int port;
    private final String scenario;
    private final double rate;
    private final double seconds;
    private final double warmup;
    private final String prefix;
    private final String seedPrefix;
    private final int seedCount;
    private final List<String> ids;
    private final int maxInFlight;
    private final String label;
    private final String hgrm;
    private final CharSequence bearer;
    private final CharSequence[] newBearers;
    private final Buffer body = Buffer.buffer(Driver.BODY);
    private final long warmCount;
    private final long total;
    private final double intervalNanos;
    private long scheduleStart;

    // event-loop state: touched only on the event loop
    private final Histogram all = new Histogram(HIGHEST, 3);
    private final Map<Driver.Kind, Histogram> byKind = new EnumMap<>(Driver.Kind.class);
    private final Map<Integer, Histogram> byStatus = new TreeMap<>();
    private final Map<String, Long> errorKinds = new TreeMap<>();
    private long ok;
    private long errors;
    private long notSent;
    private int inFlight;
    private long measuredInFlight;
    private long lastDone;
    private long lastSent;
    private long maxLag;
    private boolean allScheduled;
    private final CompletableFuture<Void> drained = new CompletableFuture<>();

    private Buffer postHead(String host, int port, CharSequence authorization) {
        return Buffer.buffer("POST /v1/transfers HTTP/1.1\r\nHost: " + host + ":" + port + "\r\nAuthorization: " + authorization
                + "\r\nContent-Type: application/json\r\nContent-Length: " + body.length() + "\r\nIdempotency-Key: ");
    }

    OpenLoad(Map<String, String> o) throws Exception {
        URI base = Driver.localBase(o);
        host = base.getHost();
        port = base.getPort();
        String subject = o.getOrDefault("subject", "bench-user");
        bearer = HttpHeaders.createOptimized("Bearer " + Driver.token(Path.of(Driver.need(o, "key")), subject));
        int owners = Integer.parseInt(o.getOrDefault("owners", "1"));
        if (owners < 1 || owners > 10_000) {
            throw new IllegalArgumentException("owners must be in [1, 10000]");
        }
        // new transfers spread over --owners principals (<subject>-0 .. -N-1, each its own account), one after the
        // other; 1 keeps every transfer on <subject>, as replays and polls always are (their seeds were made by it)
        newBearers = new CharSequence[owners];
        for (int j = 0; j < owners; j++) {
            newBearers[j] = owners == 1 ? bearer
                    : HttpHeaders.createOptimized("Bearer " + Driver.token(Path.of(Driver.need(o, "key")), subject + "-" + j));
        }
        scenario = Driver.need(o, "scenario");
        Driver.kind(scenario, 0); // rejects an unknown scenario before anything starts
        rate = Double.parseDouble(Driver.need(o, "rate"));
        seconds = Double.parseDouble(Driver.need(o, "duration"));
        if (rate <= 0 || rate > 100_000 || seconds <= 0 || seconds > 600) {
            throw new IllegalArgumentException("rate must be in (0, 100000] and duration in (0, 600]");
        }
        prefix = o.getOrDefault("prefix", "k" + System.nanoTime());
        seedPrefix = o.get("seed-prefix");
        seedCount = Integer.parseInt(o.getOrDefault("seed-count", "0"));
        ids = o.containsKey("ids") && Files.exists(Path.of(o.get("ids"))) ? Files.readAllLines(Path.of(o.get("ids"))) : List.of();
        boolean replays = scenario.equals("replay") || scenario.equals("mix") || scenario.equals("soak");
        boolean polls = scenario.equals("poll") || scenario.equals("mix") || scenario.equals("soak");
        if (replays && (seedPrefix == null || seedCount <= 0) || polls && ids.isEmpty()) {
            throw new IllegalArgumentException("scenario " + scenario + " needs --seed-prefix and --seed-count, or --ids");
        }
        maxInFlight = Integer.parseInt(o.getOrDefault("max-in-flight", "4000"));
        label = o.getOrDefault("label", scenario);
        hgrm = o.get("hgrm");
        // the same schedule runs --warmup seconds first, unrecorded (connections, the service's and the driver's
        // JIT for this request shape), and the measured window follows without a gap
        warmup = Double.parseDouble(o.getOrDefault("warmup", "2"));
        warmCount = Math.round(rate * warmup);
        total = warmCount + Math.round(rate * seconds);
        intervalNanos = 1e9 / rate;
        for (Driver.Kind k : Driver.Kind.values()) {
            byKind.put(k, new Histogram(HIGHEST, 3));
        }
        vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1).setWorkerPoolSize(1));
        loop = vertx.getOrCreateContext();
        int connections = Integer.parseInt(o.getOrDefault("connections", "256"));
        // "raw" (the default): ready-made request bytes on plain keep-alive sockets; "vertx": Vert.x's HttpClient
        raw = "vertx".equals(o.getOrDefault("client", "raw")) ? null : new RawHttpClient(vertx, host, port, connections, 10_000);
        String common = "Host: " + host + ":" + port + "\r\n" + "Authorization: " + bearer + "\r\n";
        postHead = postHead(host, port, bearer);
        newPostHeads = new Buffer[owners];
        for (int j = 0; j < owners; j++) {
            newPostHeads[j] = owners == 1 ? postHead : postHead(host, port, newBearers[j]);
        }
        postTail = Buffer.buffer("\r\n\r\n").appendBuffer(body);
        getHead = Buffer.buffer("GET /v1/transfers/");
        getTail = Buffer.buffer(" HTTP/1.1\r\n" + common + "\r\n");
        longPollTail = Buffer.buffer(" HTTP/1.1\r\n" + common + "Prefer: wait=2\r\nIf-None-Match: \"2\"\r\n\r\n");
        http = vertx.createHttpClient(
                new HttpClientOptions().setKeepAlive(true).setPipelining(false).setTcpNoDelay(true).setConnectTimeout(5000)
                        .setIdleTimeout(10).setIdleTimeoutUnit(TimeUnit.SECONDS),
                new PoolOptions().setHttp1MaxSize(connections).setMaxWaitQueueSize(-1));
    }

    String run() throws Exception {
        scheduleStart = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20);
        long start = scheduleStart + (long) (warmCount * intervalNanos);
        long startEpochMs = System.currentTimeMillis() + 20 + (start - scheduleStart) / 1_000_000;
        long cpuAtStart = -1;
        long next = 0;
        while (next < total) {
            long now = System.nanoTime();
            long due = Math.min(total, (long) Math.floor((now - scheduleStart) / intervalNanos) + 1);
            if (due <= next) {
                LockSupport.parkNanos(scheduleStart + (long) (next * intervalNanos) - now);
                continue;
            }
            if (cpuAtStart < 0 && due > warmCount) {
                cpuAtStart = Driver.processCpuNanos();
            }
            long from = next;
            long to = due;
            boolean last = to == total;
            loop.runOnContext(ignored -> {
                for (long i = from; i < to; i++) {
                    send(i);
                }
                if (last) {
                    allScheduled = true;
                    checkDrained();
                }
            });
            next = due;
        }
        try {
            drained.get(30, TimeUnit.SECONDS); // each request is bounded by the 10 s idle timeout, counted as an error
        } catch (TimeoutException stillOutstanding) {
            // reported as they are: the JSON below is built on the event loop from what has been counted
        }
        CompletableFuture<String> json = new CompletableFuture<>();
        long cpuStart = cpuAtStart < 0 ? Driver.processCpuNanos() : cpuAtStart;
        loop.runOnContext(ignored -> json.complete(summary(start, startEpochMs, cpuStart)));
        return json.get(10, TimeUnit.SECONDS);
    }

    private void send(long i) {
        long intended = scheduleStart + (long) (i * intervalNanos);
        boolean measured = i >= warmCount;
        Driver.Kind kind = Driver.kind(scenario, i);
        long now = System.nanoTime();
        lastSent = now;
        if (measured) {
            maxLag = Math.max(maxLag, now - intended);
        }
        if (inFlight >= maxInFlight) {
            // never silently skipped: an unsent request is an error and its "latency" is the full timeout
            if (measured) {
                notSent++;
                errors++;
                all.recordValue(TIMEOUT_MICROS);
                byKind.get(kind).recordValue(TIMEOUT_MICROS);
            }
            return;
        }
        inFlight++;
        if (measured) {
            measuredInFlight++;
        }
        if (raw != null) {
            Buffer bytes = switch (kind) {
                case NEW -> newPostHeads[(int) (i % newPostHeads.length)].copy().appendString(prefix + "-" + i).appendBuffer(postTail);
                case REPLAY -> postHead.copy().appendString(seedPrefix + "-" + (i % seedCount)).appendBuffer(postTail);
                case POLL -> getHead.copy().appendString(ids.get((int) (i % ids.size()))).appendBuffer(getTail);
                case LONG_POLL -> getHead.copy().appendString(ids.get((int) (i % ids.size()))).appendBuffer(longPollTail);
            };
            raw.send(bytes, (status, replayed, failure) -> answered(kind, intended, measured, status, failure,
                    failure != null ? null : Driver.expected(kind, status, replayed)));
            return;
        }
        RequestOptions request = new RequestOptions().setHost(host).setPort(port)
                .putHeader(AUTHORIZATION, kind == Driver.Kind.NEW ? newBearers[(int) (i % newBearers.length)] : bearer);
        switch (kind) {
            case NEW -> request.setMethod(HttpMethod.POST).setURI("/v1/transfers")
                    .putHeader(CONTENT_TYPE, JSON).putHeader(IDEMPOTENCY_KEY, prefix + "-" + i);
            case REPLAY -> request.setMethod(HttpMethod.POST).setURI("/v1/transfers")
                    .putHeader(CONTENT_TYPE, JSON).putHeader(IDEMPOTENCY_KEY, seedPrefix + "-" + (i % seedCount));
            case POLL -> request.setMethod(HttpMethod.GET).setURI("/v1/transfers/" + ids.get((int) (i % ids.size())));
            // held until the transfer differs from version 2 (a seeded transfer's final one) or 2 s pass: 304
            case LONG_POLL -> request.setMethod(HttpMethod.GET).setURI("/v1/transfers/" + ids.get((int) (i % ids.size())))
                    .putHeader(PREFER, WAIT_2).putHeader(IF_NONE_MATCH, VERSION_2);
        }
        boolean withBody = kind == Driver.Kind.NEW || kind == Driver.Kind.REPLAY;
        http.request(request)
                .compose(req -> withBody ? req.send(body) : req.send())
                .compose(resp -> resp.end().map(resp))
                .onComplete(ar -> {
                    HttpClientResponse r = ar.result();
                    answered(kind, intended, measured, r == null ? 0 : r.statusCode(), ar.cause(),
                            r == null ? null : Driver.expected(kind, r.statusCode(), r.headers().contains("Idempotent-Replayed")));
                });
    }

    private void answered(Driver.Kind kind, long intended, boolean measured, int status, Throwable e, String unexpected) {
        long done = System.nanoTime();
        inFlight--;
        if (measured) {
            measuredInFlight--;
            long micros = Math.min(Math.max(1, (done - intended) / 1000), HIGHEST);
            all.recordValue(micros);
            byKind.get(kind).recordValue(micros);
            lastDone = Math.max(lastDone, done);
            byStatus.computeIfAbsent(status, x -> new Histogram(HIGHEST, 3)).recordValue(micros);
            String problem = e != null ? e.getClass().getSimpleName() : unexpected;
            if (problem == null) {
                ok++;
            } else {
                errors++;
                errorKinds.merge(problem, 1L, Long::sum);
            }
        }
        checkDrained();
    }

    private void checkDrained() {
        if (allScheduled && inFlight == 0) {
            drained.complete(null);
        }
    }

    private String summary(long start, long startEpochMs, long cpuAtStart) {
        if (measuredInFlight > 0) {
            // still unanswered when the drain gave up: errors, not silently dropped samples
            errors += measuredInFlight;
            errorKinds.merge("unanswered", measuredInFlight, Long::sum);
            measuredInFlight = 0;
        }
        double window = Math.max(lastSent, lastDone) - start;
        long endEpochMs = startEpochMs + (long) (window / 1e6);
        double achieved = ok / (window / 1e9);
        // the driver's own CPU over the measured window: what its requests cost the shared cores on its side
        double driverCpuS = (Driver.processCpuNanos() - cpuAtStart) / 1e9;
        long requests = total - warmCount;
        if (hgrm != null) {
            try (PrintStream out = new PrintStream(Files.newOutputStream(Path.of(hgrm)), true, StandardCharsets.UTF_8)) {
                all.outputPercentileDistribution(out, 5, 1000.0); // milliseconds
            } catch (java.io.IOException ex) {
                throw new java.io.UncheckedIOException(ex);
            }
        }
        StringBuilder kinds = new StringBuilder();
        byKind.forEach((k, h) -> {
            if (h.getTotalCount() > 0) {
                kinds.append(String.format(Locale.ROOT, ",\"%s\":{\"n\":%d,\"p50\":%.2f,\"p99\":%.2f,\"p999\":%.2f}",
                        k.name().toLowerCase(Locale.ROOT), h.getTotalCount(), Driver.ms(h, 50), Driver.ms(h, 99), Driver.ms(h, 99.9)));
            }
        });
        StringBuilder statuses = new StringBuilder();
        byStatus.forEach((code, h) -> statuses.append(statuses.length() == 0 ? "" : ",")
                .append(String.format(Locale.ROOT, "\"%d\":{\"n\":%d,\"p50\":%.2f,\"p99\":%.2f}", code, h.getTotalCount(), Driver.ms(h, 50), Driver.ms(h, 99))));
        StringBuilder ek = new StringBuilder();
        errorKinds.forEach((k, v) -> ek.append(ek.length() == 0 ? "" : ",").append('"').append(k).append("\":").append(v));
        return String.format(Locale.ROOT,
                "{\"label\":\"%s\",\"startEpochMs\":%d,\"endEpochMs\":%d,\"scenario\":\"%s\",\"offered\":%.1f,\"duration\":%.1f,\"warmup\":%.1f,\"requests\":%d,\"ok\":%d,\"errors\":%d,"
                        + "\"notSent\":%d,\"achieved\":%.1f,\"p50\":%.2f,\"p90\":%.2f,\"p99\":%.2f,\"p999\":%.2f,\"max\":%.2f,"
                        + "\"schedulerMaxLagMs\":%.2f,\"driverCores\":%.3f,\"driverUsPerRequest\":%.1f,\"errorKinds\":{%s},\"byStatus\":{%s}%s}",
                label, startEpochMs, endEpochMs, scenario, rate, seconds, warmup, requests, ok, errors, notSent, achieved,
                Driver.ms(all, 50), Driver.ms(all, 90), Driver.ms(all, 99), Driver.ms(all, 99.9), all.getMaxValue() / 1000.0, maxLag / 1e6,
                driverCpuS / (window / 1e9), driverCpuS * 1e6 / Math.max(1, requests), ek, statuses, kinds);
    }
}
