package dev.ledgerline.bench;

import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import org.HdrHistogram.Histogram;

import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A closed-loop run, as {@code wrk} does it: each of {@code --connections} keep-alive connections sends its next
 * request as soon as its previous answer has arrived, for {@code --warmup} seconds unrecorded and then
 * {@code --duration} seconds measured. The rate is whatever the target sustains at that concurrency, and latency is
 * per answered request (from its send), so it is the figure to compare throughput and CPU per request, not tails
 * under a fixed arrival rate (that is {@link OpenLoad}). Scenarios {@code new} and {@code replay} only; the same
 * request bytes as {@link OpenLoad}'s raw client, or another service's POST: {@code --path} and {@code --body}
 * replace the service's path and JSON body, and without {@code --key} no bearer token is sent. Everything runs on
 * one event loop.
 */
final class ClosedLoad {

    private static final long HIGHEST = TimeUnit.SECONDS.toMicros(60);

    final Vertx vertx;
    private final Context loop;
    private final RawHttpClient raw;
    private final Driver.Kind kind;
    private final Buffer postHead;
    private final Buffer postTail;
    private final String prefix;
    private final String seedPrefix;
    private final int seedCount;
    private final int connections;
    private final double warmup;
    private final double seconds;
    private final String label;

    // event-loop state
    private final Histogram all = new Histogram(HIGHEST, 3);
    private final Map<String, Long> errorKinds = new TreeMap<>();
    private long next;
    private long ok;
    private long errors;
    private long measureFrom;
    private long measureUntil;
    private int outstanding;
    private final CompletableFuture<Void> drained = new CompletableFuture<>();

    ClosedLoad(Map<String, String> o) throws Exception {
        var base = Driver.localBase(o);
        String scenario = Driver.need(o, "scenario");
        kind = switch (scenario) {
            case "new" -> Driver.Kind.NEW;
            case "replay" -> Driver.Kind.REPLAY;
            default -> throw new IllegalArgumentException("a closed loop runs scenario new or replay, not " + scenario);
        };
        seconds = Double.parseDouble(Driver.need(o, "duration"));
        warmup = Double.parseDouble(o.getOrDefault("warmup", "2"));
        connections = Integer.parseInt(o.getOrDefault("connections", "32"));
        if (seconds <= 0 || seconds > 600 || connections < 1 || connections > 1024) {
            throw new IllegalArgumentException("duration must be in (0, 600] and connections in [1, 1024]");
        }
        prefix = o.getOrDefault("prefix", "k" + System.nanoTime());
        seedPrefix = o.get("seed-prefix");
        seedCount = Integer.parseInt(o.getOrDefault("seed-count", "0"));
        if (kind == Driver.Kind.REPLAY && (seedPrefix == null || seedCount <= 0)) {
            throw new IllegalArgumentException("scenario replay needs --seed-prefix and --seed-count");
        }
        label = o.getOrDefault("label", scenario);
        // another service's POST (the peer's, in bench/peer.sh): its path and JSON body, and no token without --key
        String path = o.getOrDefault("path", "/v1/transfers");
        Buffer body = Buffer.buffer(o.getOrDefault("body", Driver.BODY));
        String common = "Host: " + base.getHost() + ":" + base.getPort() + "\r\n" + (o.containsKey("key")
                ? "Authorization: Bearer " + Driver.token(Path.of(o.get("key")), o.getOrDefault("subject", "bench-user")) + "\r\n"
                : "");
        postHead = Buffer.buffer("POST " + path + " HTTP/1.1\r\n" + common + "Content-Type: application/json\r\n"
                + "Content-Length: " + body.length() + "\r\nIdempotency-Key: ");
        postTail = Buffer.buffer("\r\n\r\n").appendBuffer(body);
        vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1).setWorkerPoolSize(1));
        loop = vertx.getOrCreateContext();
        raw = new RawHttpClient(vertx, base.getHost(), base.getPort(), connections, 10_000);
    }

    String run() throws Exception {
        long start = System.nanoTime();
        measureFrom = start + (long) (warmup * 1e9);
        measureUntil = measureFrom + (long) (seconds * 1e9);
        long[] cpu = new long[2];
        loop.runOnContext(ignored -> {
            for (int c = 0; c < connections; c++) {
                send();
            }
        });
        TimeUnit.NANOSECONDS.sleep(measureFrom - System.nanoTime());
        cpu[0] = Driver.processCpuNanos();
        TimeUnit.NANOSECONDS.sleep(Math.max(0, measureUntil - System.nanoTime()));
        cpu[1] = Driver.processCpuNanos();
        try {
            drained.get(30, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException stillOutstanding) {
            // reported below as they are
        }
        CompletableFuture<String> json = new CompletableFuture<>();
        loop.runOnContext(ignored -> json.complete(summary((cpu[1] - cpu[0]) / 1e9)));
        return json.get(10, TimeUnit.SECONDS);
    }

    private void send() {
        long sentAt = System.nanoTime();
        if (sentAt >= measureUntil) {
            if (outstanding == 0) {
                drained.complete(null);
            }
            return;
        }
        long i = next++;
        Buffer bytes = kind == Driver.Kind.NEW
                ? postHead.copy().appendString(prefix + "-" + i).appendBuffer(postTail)
                : postHead.copy().appendString(seedPrefix + "-" + (i % seedCount)).appendBuffer(postTail);
        outstanding++;
        raw.send(bytes, (status, replayed, failure) -> {
            outstanding--;
            long done = System.nanoTime();
            // an answer counts in the window it arrived in, wherever it was sent: the rate is answers per second
            if (done >= measureFrom && done < measureUntil) {
                String problem = failure != null ? failure.getClass().getSimpleName() : Driver.expected(kind, status, replayed);
                if (problem == null) {
                    ok++;
                    all.recordValue(Math.min(Math.max(1, (done - sentAt) / 1000), HIGHEST));
                } else {
                    errors++;
                    errorKinds.merge(problem, 1L, Long::sum);
                }
            }
            send();
        });
    }

    private String summary(double driverCpuS) {
        StringBuilder ek = new StringBuilder();
        errorKinds.forEach((k, v) -> ek.append(ek.length() == 0 ? "" : ",").append('"').append(k).append("\":").append(v));
        return String.format(Locale.ROOT,
                "{\"label\":\"%s\",\"model\":\"closed\",\"connections\":%d,\"duration\":%.1f,\"ok\":%d,\"errors\":%d,"
                        + "\"achieved\":%.1f,\"p50\":%.3f,\"p90\":%.3f,\"p99\":%.3f,\"p999\":%.3f,\"max\":%.3f,"
                        + "\"driverCores\":%.3f,\"driverUsPerRequest\":%.2f,\"errorKinds\":{%s}}",
                label, connections, seconds, ok, errors, ok / seconds, Driver.ms(all, 50), Driver.ms(all, 90),
                Driver.ms(all, 99), Driver.ms(all, 99.9), all.getMaxValue() / 1000.0, driverCpuS / seconds,
                driverCpuS * 1e6 / Math.max(1, ok), ek);
    }
}
