package dev.ledgerline.bench;

import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.SynchronizedHistogram;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Benchmark driver for Ledgerline Transfers. Subcommands:
 * <ul>
 *   <li>{@code keys DIR} — a throwaway RSA key pair: DIR/public.pem (for MP_JWT_VERIFY_PUBLICKEY_LOCATION), DIR/private.pk8</li>
 *   <li>{@code provider PORT} — the zero-latency provider stand-in (see {@link ProviderStandIn})</li>
 *   <li>{@code seed} — creates N transfers under known keys and writes their ids (closed loop; not measured)</li>
 *   <li>{@code load} — the open-model run: requests start at a constant arrival rate whatever the answers do, and
 *       latency is measured from each request's INTENDED start, so a stalled service shows as latency, not as fewer
 *       samples (no coordinated omission)</li>
 *   <li>{@code chart OUT.png TITLE LABEL=FILE.hgrm ...} — latency-by-percentile chart (see {@link Chart})</li>
 * </ul>
 * Only 127.0.0.1 is ever contacted.
 */
public final class Driver {

    static final String BODY = "{\"amount\": 1250, \"currency\": \"EUR\", \"destination\": "
            + "{\"iban\": \"DE89370400440532013000\", \"name\": \"Ada Lovelace\"}, \"description\": \"bench\"}";
    private static final Pattern ID = Pattern.compile("\"id\"\\s*:\\s*\"([0-9a-f-]{36})\"");

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            throw new IllegalArgumentException("usage: keys|provider|seed|load|chart ...");
        }
        String[] rest = java.util.Arrays.copyOfRange(args, 1, args.length);
        switch (args[0]) {
            case "keys" -> keys(Path.of(rest[0]));
            case "provider" -> ProviderStandIn.main(rest);
            case "seed" -> seed(options(rest));
            case "load" -> load(options(rest));
            case "chart" -> Chart.main(rest);
            default -> throw new IllegalArgumentException("unknown subcommand " + args[0]);
        }
    }

    // ---------------------------------------------------------------- options

    static Map<String, String> options(String[] args) {
        Map<String, String> o = new HashMap<>();
        for (String a : args) {
            if (!a.startsWith("--") || !a.contains("=")) {
                throw new IllegalArgumentException("options are --name=value, not " + a);
            }
            o.put(a.substring(2, a.indexOf('=')), a.substring(a.indexOf('=') + 1));
        }
        return o;
    }

    static String need(Map<String, String> o, String name) {
        String v = o.get(name);
        if (v == null) {
            throw new IllegalArgumentException("missing --" + name);
        }
        return v;
    }

    static URI localBase(Map<String, String> o) {
        URI base = URI.create(need(o, "url"));
        if (!"127.0.0.1".equals(base.getHost())) {
            throw new IllegalArgumentException("the driver only talks to 127.0.0.1, not " + base.getHost());
        }
        return base;
    }

    // ---------------------------------------------------------------- keys and tokens

    static void keys(Path dir) throws Exception {
        Files.createDirectories(dir);
        KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
        generator.initialize(2048);
        KeyPair pair = generator.generateKeyPair();
        Files.writeString(dir.resolve("public.pem"), "-----BEGIN PUBLIC KEY-----\n"
                + Base64.getMimeEncoder().encodeToString(pair.getPublic().getEncoded()) + "\n-----END PUBLIC KEY-----\n");
        Files.write(dir.resolve("private.pk8"), pair.getPrivate().getEncoded());
    }

    /** An RS256 JWT as the service expects it: issuer, audience, subject, groups, one hour of validity. */
    static String token(Path privateKey, String subject) throws Exception {
        PrivateKey key = KeyFactory.getInstance("RSA").generatePrivate(new PKCS8EncodedKeySpec(Files.readAllBytes(privateKey)));
        long now = System.currentTimeMillis() / 1000;
        String header = "{\"alg\":\"RS256\",\"typ\":\"JWT\"}";
        String claims = "{\"iss\":\"https://ledgerline.dev/issuer\",\"aud\":\"ledgerline-transfers\",\"sub\":\"" + subject
                + "\",\"upn\":\"" + subject + "\",\"groups\":[\"transfers.write\",\"transfers.read\"],\"iat\":" + now
                + ",\"exp\":" + (now + 3600) + ",\"jti\":\"" + java.util.UUID.randomUUID() + "\"}";
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        String signingInput = b64.encodeToString(header.getBytes(StandardCharsets.UTF_8)) + "."
                + b64.encodeToString(claims.getBytes(StandardCharsets.UTF_8));
        Signature rs256 = Signature.getInstance("SHA256withRSA");
        rs256.initSign(key);
        rs256.update(signingInput.getBytes(StandardCharsets.US_ASCII));
        return signingInput + "." + b64.encodeToString(rs256.sign());
    }

    static HttpClient client() {
        return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5))
                .executor(Executors.newFixedThreadPool(2, r -> {
                    Thread t = new Thread(r, "bench-http");
                    t.setDaemon(true);
                    return t;
                }))
                .build();
    }

    static HttpRequest post(URI base, String token, String key) {
        return HttpRequest.newBuilder(base.resolve("/v1/transfers")).timeout(Duration.ofSeconds(10))
                .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                .header("Idempotency-Key", key).POST(HttpRequest.BodyPublishers.ofString(BODY)).build();
    }

    static HttpRequest get(URI base, String token, String id) {
        return HttpRequest.newBuilder(base.resolve("/v1/transfers/" + id)).timeout(Duration.ofSeconds(10))
                .header("Authorization", "Bearer " + token).GET().build();
    }

    // ---------------------------------------------------------------- seed

    /** Creates {@code --count} transfers under keys {@code --prefix-0..N-1} and writes their ids, one a line, to {@code --ids}. */
    static void seed(Map<String, String> o) throws Exception {
        URI base = localBase(o);
        String token = token(Path.of(need(o, "key")), o.getOrDefault("subject", "bench-user"));
        int count = Integer.parseInt(need(o, "count"));
        String prefix = need(o, "prefix");
        HttpClient client = client();
        String[] ids = new String[count];
        Semaphore window = new Semaphore(16);
        AtomicInteger failed = new AtomicInteger();
        List<CompletableFuture<?>> all = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            window.acquire();
            int n = i;
            all.add(client.sendAsync(post(base, token, prefix + "-" + i), HttpResponse.BodyHandlers.ofString())
                    .whenComplete((r, e) -> {
                        window.release();
                        if (e != null || r.statusCode() != 201) {
                            failed.incrementAndGet();
                            return;
                        }
                        Matcher m = ID.matcher(r.body());
                        if (m.find()) {
                            ids[n] = m.group(1);
                        } else {
                            failed.incrementAndGet();
                        }
                    }));
        }
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
        if (failed.get() > 0) {
            throw new IllegalStateException(failed.get() + " of " + count + " seed requests failed");
        }
        Files.write(Path.of(need(o, "ids")), List.of(ids));
        System.out.println("seeded " + count);
    }

    // ---------------------------------------------------------------- load

    enum Kind { NEW, REPLAY, POLL, LONG_POLL }

    /**
     * Open model. Options: url, key, scenario (new|replay|mix|poll), rate (req/s), duration (s), prefix (for new keys),
     * seed-prefix and seed-count (replayed keys), ids (file of seeded ids, for polls), hgrm (percentile file to write),
     * label, max-in-flight (requests outstanding beyond this are not sent and count as errors), connections (keep-alive
     * connections at most; requests beyond them wait in the client's queue, and that wait counts as latency).
     */
    static void load(Map<String, String> o) throws Exception {
        URI base = localBase(o);
        String token = token(Path.of(need(o, "key")), o.getOrDefault("subject", "bench-user"));
        String scenario = need(o, "scenario");
        double rate = Double.parseDouble(need(o, "rate"));
        double seconds = Double.parseDouble(need(o, "duration"));
        if (rate <= 0 || rate > 50_000 || seconds <= 0 || seconds > 600) {
            throw new IllegalArgumentException("rate must be in (0, 50000] and duration in (0, 600]");
        }
        String prefix = o.getOrDefault("prefix", "k" + System.nanoTime());
        String seedPrefix = o.get("seed-prefix");
        int seedCount = Integer.parseInt(o.getOrDefault("seed-count", "0"));
        List<String> ids = o.containsKey("ids") && Files.exists(Path.of(o.get("ids"))) ? Files.readAllLines(Path.of(o.get("ids"))) : List.of();
        int maxInFlight = Integer.parseInt(o.getOrDefault("max-in-flight", "4000"));
        // the driver is a fresh JVM each run: its first second (class loading, JIT, opening connections) would show
        // up as the service's latency. So the same schedule runs --warmup seconds first, unrecorded, and the
        // measured window follows without a gap.
        double warmup = Double.parseDouble(o.getOrDefault("warmup", "2"));
        long warmCount = Math.round(rate * warmup);
        long total = warmCount + Math.round(rate * seconds);

        // Vert.x HTTP/1.1 client on one event loop, keep-alive connections (up to --connections), no pipelining:
        // at thousands of requests per second it costs the shared cores far less than the JDK HttpClient did
        Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1).setWorkerPoolSize(1));
        io.vertx.core.http.HttpClient http = vertx.createHttpClient(
                new HttpClientOptions().setKeepAlive(true).setPipelining(false).setConnectTimeout(5000),
                new PoolOptions().setHttp1MaxSize(Integer.parseInt(o.getOrDefault("connections", "256"))).setMaxWaitQueueSize(-1));
        Buffer body = Buffer.buffer(BODY);
        String bearer = "Bearer " + token;
        Histogram all = new SynchronizedHistogram(TimeUnit.SECONDS.toMicros(60), 3);
        Map<Kind, Histogram> byKind = new HashMap<>();
        for (Kind k : Kind.values()) {
            byKind.put(k, new SynchronizedHistogram(TimeUnit.SECONDS.toMicros(60), 3));
        }
        LongAdder ok = new LongAdder();
        LongAdder errors = new LongAdder();
        LongAdder notSent = new LongAdder();
        Map<String, LongAdder> errorKinds = new java.util.concurrent.ConcurrentHashMap<>();
        // latency per answer status: an overload run compares how fast refusals (503) come back with accepts (201)
        Map<Integer, Histogram> byStatus = new java.util.concurrent.ConcurrentHashMap<>();
        AtomicInteger inFlight = new AtomicInteger();
        AtomicLong lastDone = new AtomicLong();

        double intervalNanos = 1e9 / rate;
        long scheduleStart = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20);
        long start = scheduleStart + (long) (warmCount * intervalNanos);
        long startEpochMs = System.currentTimeMillis() + 20 + (start - scheduleStart) / 1_000_000;
        long maxLag = 0;
        for (long i = 0; i < total; i++) {
            long intended = scheduleStart + (long) (i * intervalNanos);
            boolean measured = i >= warmCount;
            long now;
            while ((now = System.nanoTime()) < intended) {
                LockSupport.parkNanos(intended - now);
            }
            if (measured) {
                maxLag = Math.max(maxLag, now - intended);
            }
            Kind kind = kind(scenario, i);
            if (inFlight.get() >= maxInFlight) {
                // never silently skipped: an unsent request is an error and its "latency" is the full timeout
                if (measured) {
                    notSent.increment();
                    errors.increment();
                    all.recordValue(TimeUnit.SECONDS.toMicros(10));
                    byKind.get(kind).recordValue(TimeUnit.SECONDS.toMicros(10));
                }
                continue;
            }
            RequestOptions request = new RequestOptions().setHost(base.getHost()).setPort(base.getPort())
                    .setIdleTimeout(10_000).putHeader("Authorization", bearer);
            switch (kind) {
                case NEW -> request.setMethod(HttpMethod.POST).setURI("/v1/transfers")
                        .putHeader("Content-Type", "application/json").putHeader("Idempotency-Key", prefix + "-" + i);
                case REPLAY -> request.setMethod(HttpMethod.POST).setURI("/v1/transfers")
                        .putHeader("Content-Type", "application/json").putHeader("Idempotency-Key", seedPrefix + "-" + (i % seedCount));
                case POLL -> request.setMethod(HttpMethod.GET).setURI("/v1/transfers/" + ids.get((int) (i % ids.size())));
                // held until the transfer differs from version 2 (a seeded transfer's final one) or 2 s pass: 304
                case LONG_POLL -> request.setMethod(HttpMethod.GET).setURI("/v1/transfers/" + ids.get((int) (i % ids.size())))
                        .putHeader("Prefer", "wait=2").putHeader("If-None-Match", "\"2\"");
            }
            inFlight.incrementAndGet();
            http.request(request)
                    .compose(req -> kind == Kind.POLL || kind == Kind.LONG_POLL ? req.send() : req.send(body))
                    .compose(resp -> resp.end().map(ignored -> resp))
                    .onComplete(ar -> {
                        HttpClientResponse r = ar.result();
                        Throwable e = ar.cause();
                        long done = System.nanoTime();
                        inFlight.decrementAndGet();
                        if (!measured) {
                            return;
                        }
                        long micros = Math.max(1, (done - intended) / 1000);
                        all.recordValue(Math.min(micros, all.getHighestTrackableValue()));
                        byKind.get(kind).recordValue(Math.min(micros, all.getHighestTrackableValue()));
                        lastDone.accumulateAndGet(done, Math::max);
                        byStatus.computeIfAbsent(r == null ? 0 : r.statusCode(),
                                        x -> new SynchronizedHistogram(TimeUnit.SECONDS.toMicros(60), 3))
                                .recordValue(Math.min(micros, all.getHighestTrackableValue()));
                        String problem = e != null ? e.getClass().getSimpleName() : expected(kind, r.statusCode(), r.headers());
                        if (problem == null) {
                            ok.increment();
                        } else {
                            errors.increment();
                            errorKinds.computeIfAbsent(problem, x -> new LongAdder()).increment();
                        }
                    });
        }
        long sentEnd = System.nanoTime();
        long drainDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (inFlight.get() > 0 && System.nanoTime() < drainDeadline) {
            Thread.sleep(5); // each request has its own 10 s timeout, counted as an error
        }
        double window = Math.max(sentEnd, lastDone.get()) - start;
        long endEpochMs = startEpochMs + (long) (window / 1e6);
        double achieved = ok.sum() / (window / 1e9);

        String label = o.getOrDefault("label", scenario);
        if (o.containsKey("hgrm")) {
            try (PrintStream out = new PrintStream(Files.newOutputStream(Path.of(o.get("hgrm"))), true, StandardCharsets.UTF_8)) {
                all.outputPercentileDistribution(out, 5, 1000.0); // milliseconds
            }
        }
        StringBuilder kinds = new StringBuilder();
        for (Kind k : Kind.values()) {
            Histogram h = byKind.get(k);
            if (h.getTotalCount() > 0) {
                kinds.append(String.format(Locale.ROOT, ",\"%s\":{\"n\":%d,\"p50\":%.2f,\"p99\":%.2f,\"p999\":%.2f}",
                        k.name().toLowerCase(), h.getTotalCount(), ms(h, 50), ms(h, 99), ms(h, 99.9)));
            }
        }
        StringBuilder statuses = new StringBuilder();
        new java.util.TreeMap<>(byStatus).forEach((code, h) -> statuses.append(statuses.length() == 0 ? "" : ",")
                .append(String.format(Locale.ROOT, "\"%d\":{\"n\":%d,\"p50\":%.2f,\"p99\":%.2f}", code, h.getTotalCount(), ms(h, 50), ms(h, 99))));
        StringBuilder ek = new StringBuilder();
        errorKinds.forEach((k, v) -> ek.append(ek.length() == 0 ? "" : ",").append('"').append(k).append("\":").append(v.sum()));
        System.out.printf(Locale.ROOT,
                "{\"label\":\"%s\",\"startEpochMs\":%d,\"endEpochMs\":%d,\"scenario\":\"%s\",\"offered\":%.1f,\"duration\":%.1f,\"warmup\":%.1f,\"requests\":%d,\"ok\":%d,\"errors\":%d,"
                        + "\"notSent\":%d,\"achieved\":%.1f,\"p50\":%.2f,\"p90\":%.2f,\"p99\":%.2f,\"p999\":%.2f,\"max\":%.2f,"
                        + "\"schedulerMaxLagMs\":%.2f,\"errorKinds\":{%s},\"byStatus\":{%s}%s}%n",
                label, startEpochMs, endEpochMs, scenario, rate, seconds, warmup, total - warmCount, ok.sum(), errors.sum(), notSent.sum(), achieved,
                ms(all, 50), ms(all, 90), ms(all, 99), ms(all, 99.9), all.getMaxValue() / 1000.0, maxLag / 1e6, ek, statuses, kinds);
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    static double ms(Histogram h, double percentile) {
        return h.getValueAtPercentile(percentile) / 1000.0;
    }

    /**
     * 80 % new, 15 % replays, 5 % polls for "mix"; 70 % new, 15 % replays, 10 % polls, 5 % long polls for "soak";
     * interleaved evenly; one kind otherwise.
     */
    static Kind kind(String scenario, long i) {
        return switch (scenario) {
            case "new" -> Kind.NEW;
            case "replay" -> Kind.REPLAY;
            case "poll" -> Kind.POLL;
            case "mix" -> {
                int slot = (int) (i % 20);
                yield slot < 16 ? Kind.NEW : slot < 19 ? Kind.REPLAY : Kind.POLL;
            }
            case "soak" -> {
                int slot = (int) (i % 20);
                yield slot < 14 ? Kind.NEW : slot < 17 ? Kind.REPLAY : slot < 19 ? Kind.POLL : Kind.LONG_POLL;
            }
            default -> throw new IllegalArgumentException("scenario is new|replay|mix|poll|soak, not " + scenario);
        };
    }

    /** null when the answer is what the scenario expects, else a short name for the deviation. */
    static String expected(Kind kind, int s, MultiMap headers) {
        return switch (kind) {
            case NEW -> s == 201 && headers.get("Idempotent-Replayed") == null ? null : "new:" + s;
            case REPLAY -> s == 201 && headers.get("Idempotent-Replayed") != null ? null : "replay:" + s;
            case POLL -> s == 200 ? null : "poll:" + s;
            case LONG_POLL -> s == 200 || s == 304 ? null : "long-poll:" + s;
        };
    }

    private Driver() {
    }

}
