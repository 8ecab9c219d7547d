package dev.ledgerline.bench;

import org.HdrHistogram.Histogram;

import java.io.IOException;
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
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Benchmark driver for Ledgerline Transfers. Subcommands:
 * <ul>
 *   <li>{@code keys DIR} — a throwaway RSA key pair: DIR/public.pem (for MP_JWT_VERIFY_PUBLICKEY_LOCATION), DIR/private.pk8</li>
 *   <li>{@code token KEY.pk8 SUBJECT GROUP...} — prints a token of those groups (e.g. {@code webhooks.admin}), signed as
 *       the load's tokens are</li>
 *   <li>{@code provider PORT} — the zero-latency provider stand-in (see {@link ProviderStandIn})</li>
 *   <li>{@code static PORT [REPLAY-PREFIX]} — the calibration target: a fixed transfer, answered at once (see {@link StaticResponder})</li>
 *   <li>{@code wrk-script KEY.pk8 OUT.lua SEED-PREFIX SEED-COUNT} — a {@code wrk} script sending exactly the replays of
 *       {@code load --scenario=replay} (same token, body and keys) and printing one JSON line when done</li>
 *   <li>{@code seed} — creates N transfers under known keys and writes their ids (closed loop; not measured)</li>
 *   <li>{@code load} — the open-model run: requests start at a constant arrival rate whatever the answers do, and
 *       latency is measured from each request's INTENDED start, so a stalled service shows as latency, not as fewer
 *       samples (no coordinated omission)</li>
 *   <li>{@code serve PORT} — runs {@code load}s on request, in one long-lived JVM (see {@link #serve})</li>
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
            throw new IllegalArgumentException("usage: keys|token|provider|static|wrk-script|seed|load|serve|chart ...");
        }
        String[] rest = java.util.Arrays.copyOfRange(args, 1, args.length);
        switch (args[0]) {
            case "keys" -> keys(Path.of(rest[0]));
            case "token" -> System.out.println(token(Path.of(rest[0]), rest[1],
                    java.util.Arrays.copyOfRange(rest, 2, rest.length)));
            case "provider" -> ProviderStandIn.main(rest);
            case "static" -> StaticResponder.main(rest);
            case "wrk-script" -> wrkScript(Path.of(rest[0]), Path.of(rest[1]), rest[2], Integer.parseInt(rest[3]));
            case "seed" -> seed(options(rest));
            case "load" -> System.out.println(load(options(rest)));
            case "serve" -> serve(Integer.parseInt(rest[0]));
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
        return token(privateKey, subject, "transfers.write", "transfers.read");
    }

    /** The same with other groups (the service's scopes). */
    static String token(Path privateKey, String subject, String... groups) throws Exception {
        PrivateKey key = KeyFactory.getInstance("RSA").generatePrivate(new PKCS8EncodedKeySpec(Files.readAllBytes(privateKey)));
        long now = System.currentTimeMillis() / 1000;
        String header = "{\"alg\":\"RS256\",\"typ\":\"JWT\"}";
        String claims = "{\"iss\":\"https://ledgerline.dev/issuer\",\"aud\":\"ledgerline-transfers\",\"sub\":\"" + subject
                + "\",\"upn\":\"" + subject + "\",\"groups\":[\"" + String.join("\",\"", groups) + "\"],\"iat\":" + now
                + ",\"exp\":" + (now + 3600) + ",\"jti\":\"" + java.util.UUID.randomUUID() + "\"}";
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        String signingInput = b64.encodeToString(header.getBytes(StandardCharsets.UTF_8)) + "."
                + b64.encodeToString(claims.getBytes(StandardCharsets.UTF_8));
        Signature rs256 = Signature.getInstance("SHA256withRSA");
        rs256.initSign(key);
        rs256.update(signingInput.getBytes(StandardCharsets.US_ASCII));
        return signingInput + "." + b64.encodeToString(rs256.sign());
    }

    /**
     * The wrk cross-check: the requests of {@code load --scenario=replay} (the same bearer token, JSON body and
     * idempotency keys {@code SEED-PREFIX-0..N-1}, in turn), and a {@code done} hook that prints
     * {@code WRKJSON {...}} with the figures bench/run.sh reads. wrk is a closed loop (each connection sends its next
     * request when the answer arrives), so its percentiles are per answered request, not from an intended start.
     */
    static void wrkScript(Path privateKey, Path out, String seedPrefix, int seedCount) throws Exception {
        String lua = """
                -- generated by bench/driver (Driver wrk-script): the replays of the driver's scenario 2
                local headers = {
                  ["Authorization"] = "Bearer %s",
                  ["Content-Type"] = "application/json",
                }
                local body = '%s'
                local prefix, count, n = "%s-", %d, 0
                request = function()
                  headers["Idempotency-Key"] = prefix .. (n %% count)
                  n = n + 1
                  return wrk.format("POST", "/v1/transfers", headers, body)
                end
                done = function(summary, latency, requests)
                  local e = summary.errors
                  local s = summary.duration / 1e6
                  io.write(string.format('WRKJSON {"requests":%%d,"durationS":%%.3f,"rps":%%.1f,"p50":%%.3f,"p99":%%.3f,'
                    .. '"p999":%%.3f,"max":%%.3f,"socketErrors":%%d,"non2xx3xx":%%d}\\n',
                    summary.requests, s, summary.requests / s, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
                    latency:percentile(99.9) / 1000, latency.max / 1000, e.connect + e.read + e.write + e.timeout, e.status))
                end
                """.formatted(token(privateKey, "bench-user"), BODY, seedPrefix, seedCount);
        Files.writeString(out, lua);
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
     * Open model. Options: url, key, scenario (new|replay|mix|poll|soak), rate (req/s), duration (s), prefix (for new
     * keys), seed-prefix and seed-count (replayed keys), ids (file of seeded ids, for polls), hgrm (percentile file to
     * write), label, max-in-flight (requests outstanding beyond this are not sent and count as errors), connections
     * (keep-alive connections at most; requests beyond them wait in the client's queue, and that wait counts as
     * latency), owners (new transfers spread over this many principals, each its own account; 1 by default), warmup (seconds of the same schedule sent first, unrecorded), client (raw, the default, or vertx; see
     * {@link OpenLoad}). With {@code --model=closed}: a closed loop instead, each connection sending its next request
     * when its answer arrives ({@link ClosedLoad}; no rate). Returns one JSON line.
     */
    static String load(Map<String, String> o) throws Exception {
        if ("closed".equals(o.get("model"))) {
            ClosedLoad run = new ClosedLoad(o);
            try {
                return run.run();
            } finally {
                run.vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
            }
        }
        OpenLoad run = new OpenLoad(o);
        try {
            return run.run();
        } finally {
            run.vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    /**
     * {@code serve PORT}: one long-lived driver for a whole benchmark run. {@code POST /load} on 127.0.0.1:PORT with
     * the options of {@code load}, one {@code --name=value} a line, runs that load and answers its JSON line; loads
     * run one at a time. A fresh JVM per step spent most of its short life loading classes and compiling (with C1
     * only, its code stayed slow): a JVM that lives through the run compiles its hot path once, with C2.
     */
    static void serve(int port) throws IOException {
        com.sun.net.httpserver.HttpServer server = com.sun.net.httpserver.HttpServer.create(
                new java.net.InetSocketAddress("127.0.0.1", port), 16);
        server.createContext("/load", exchange -> {
            byte[] answer;
            int status;
            try {
                String[] args = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8).trim().split("\\R+");
                answer = (load(options(args)) + "\n").getBytes(StandardCharsets.UTF_8);
                status = 200;
            } catch (Exception e) {
                answer = (e + "\n").getBytes(StandardCharsets.UTF_8);
                status = 500;
            }
            exchange.sendResponseHeaders(status, answer.length);
            exchange.getResponseBody().write(answer);
            exchange.close();
        });
        server.start(); // one dispatcher thread: loads never overlap
        System.out.println("driver serving loads on 127.0.0.1:" + port);
    }

    /** CPU time of this whole process (every thread, GC and JIT included). */
    static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
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
    static String expected(Kind kind, int s, boolean replayed) {
        return switch (kind) {
            case NEW -> s == 201 && !replayed ? null : "new:" + s;
            case REPLAY -> s == 201 && replayed ? null : "replay:" + s;
            case POLL -> s == 200 ? null : "poll:" + s;
            case LONG_POLL -> s == 200 || s == 304 ? null : "long-poll:" + s;
        };
    }

    private Driver() {
    }

}
