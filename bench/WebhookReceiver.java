import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The fast webhook receiver of bench/webhookrate.sh: a one-file JDK program (no dependencies), run as
 *
 *     java bench/WebhookReceiver.java PORT[,PORT...] [THREADS]
 *
 * on 127.0.0.1, one server per port (endpoints on several ports are several hosts to the service's HTTP client, which
 * keeps a connection pool per address), all counted together. Every POST under /hooks/ is read to its end and answered 200 with no body at once (HTTP/1.1
 * keep-alive), and counted: requests in all and per path (one path per endpoint), distinct Ledgerline-Event-Id
 * values per path (so a re-delivery shows as requests > distinct), the first and the last arrival (epoch ms).
 * GET /count answers those counts as JSON; DELETE /count clears them.
 */
public final class WebhookReceiver {

    private static final LongAdder REQUESTS = new LongAdder();
    private static final Map<String, LongAdder> PER_PATH = new ConcurrentHashMap<>();
    private static final Map<String, Set<String>> EVENTS = new ConcurrentHashMap<>();
    private static final AtomicLong FIRST = new AtomicLong();
    private static final AtomicLong LAST = new AtomicLong();

    public static void main(String[] args) throws IOException {
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 4;
        var executor = Executors.newFixedThreadPool(threads);
        for (String port : args[0].split(",")) {
            HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), Integer.parseInt(port)), 256);
            server.setExecutor(executor);
            server.createContext("/hooks/", WebhookReceiver::hook);
            server.createContext("/count", WebhookReceiver::count);
            server.start();
        }
        System.out.println("webhook receiver on 127.0.0.1:" + args[0] + ", " + threads + " threads");
    }

    private static void hook(HttpExchange exchange) throws IOException {
        try (InputStream in = exchange.getRequestBody()) {
            in.readAllBytes();
        }
        long now = System.currentTimeMillis();
        String path = exchange.getRequestURI().getPath();
        REQUESTS.increment();
        PER_PATH.computeIfAbsent(path, p -> new LongAdder()).increment();
        String event = exchange.getRequestHeaders().getFirst("Ledgerline-Event-Id");
        if (event != null) {
            EVENTS.computeIfAbsent(path, p -> ConcurrentHashMap.newKeySet()).add(event);
        }
        FIRST.compareAndSet(0, now);
        LAST.accumulateAndGet(now, Math::max);
        exchange.sendResponseHeaders(200, -1);
        exchange.close();
    }

    private static synchronized void count(HttpExchange exchange) throws IOException {
        if ("DELETE".equals(exchange.getRequestMethod())) {
            REQUESTS.reset();
            PER_PATH.clear();
            EVENTS.clear();
            FIRST.set(0);
            LAST.set(0);
        }
        StringBuilder paths = new StringBuilder();
        new TreeMap<>(PER_PATH).forEach((path, n) -> paths.append(paths.length() == 0 ? "" : ",")
                .append("\"").append(path).append("\":{\"requests\":").append(n.sum()).append(",\"distinct\":")
                .append(EVENTS.getOrDefault(path, Set.of()).size()).append("}"));
        long distinct = EVENTS.values().stream().mapToLong(Set::size).sum();
        byte[] body = ("{\"requests\":" + REQUESTS.sum() + ",\"distinct\":" + distinct + ",\"firstMs\":" + FIRST.get()
                + ",\"lastMs\":" + LAST.get() + ",\"paths\":{" + paths + "}}\n").getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().add("Content-Type", "application/json");
        exchange.sendResponseHeaders(200, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }

    private WebhookReceiver() {
    }
}
