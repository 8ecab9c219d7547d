package dev.ledgerline.transfers.conformance;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;

import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A provider stand-in that serves {@code provider-api.yaml} and keeps every obligation — except the one
 * {@link Flaw} it is told to break. It exists to prove the conformance kit has teeth: each flaw must make
 * exactly its own obligations fail. A send of {@link #REJECTED_AMOUNT} is rejected, so the kit can provoke
 * a rejection the way it would at a real provider (by a known order); three switches let it hold a send
 * before it is applied ({@link #holdNext}), hold an answer after the send executed ({@link #delayNextAnswer})
 * and fail a send with a 5xx before anything executes ({@link #failNext}). Every answer carries a {@code Date}
 * header from the stand-in's clock. It states a key window of {@link #KEY_WINDOW}.
 *
 * <p>Served by Vert.x rather than the JDK's HTTP server, which overwrites any {@code Date} header with its own
 * clock and so could not play a provider whose clock is behind.
 */
final class StandInProvider implements AutoCloseable {

    static final long REJECTED_AMOUNT = 40_200;
    /** Long enough that a kit slowed down by a busy machine still looks up inside it. */
    static final long LAG_MS = 2500;
    static final long CLOCK_BEHIND_MS = 3000;
    /** The key window every stand-in states; {@link Flaw#FORGETS_KEYS_EARLY} forgets a key after half of it. */
    static final Duration KEY_WINDOW = Duration.ofMillis(2000);

    private static final DateTimeFormatter HTTP_DATE = DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.ROOT);

    enum Flaw {
        NONE,
        /** Every send executes, whatever its key (a provider without idempotency). */
        EXECUTES_TWICE_PER_KEY,
        /** Executes a send whose Ledgerline-Not-After has passed. */
        IGNORES_DEADLINE,
        /** Lookups answer 404 for everything, executed or not. */
        LOOKUP_LIES,
        /** Lookups do not see an execution younger than {@link #LAG_MS}. */
        LOOKUP_LAGS,
        /** A rejected key executes when sent again. */
        FORGETS_REJECTIONS,
        /** Checks the deadline when a send arrives, then applies it after holding it: a late execution. */
        CHECKS_DEADLINE_ON_ARRIVAL,
        /** Answers 409 to a send whose key's first request is still in flight (Stripe does). */
        CONFLICT_WHILE_IN_FLIGHT,
        /** Saves a 500 it answered for a key and replays it to every later send under that key. */
        REPLAYS_SAVED_ERROR,
        /** Answers 400 to a key reused with a different body, although the key executed (Stripe's idempotency_error). */
        REJECTS_REUSED_KEY,
        /** Its clock, for its Date header and for its deadline check, is {@link #CLOCK_BEHIND_MS} behind. */
        CLOCK_BEHIND,
        /** Lookups see an execution only once its answer was delivered: a send whose caller dropped stays 404. */
        LOOKUP_MISSES_UNANSWERED,
        /** Forgets a key after half the {@link #KEY_WINDOW} it states: a later send under it executes again. */
        FORGETS_KEYS_EARLY
    }

    private record Payment(String status, int executions, Instant at, String body) {
    }

    private final Flaw flaw;
    private final Vertx vertx = Vertx.vertx();
    private final HttpServer server;
    private final Map<String, Payment> payments = new ConcurrentHashMap<>();
    private final Set<String> inFlight = ConcurrentHashMap.newKeySet();
    private final Set<String> savedErrors = ConcurrentHashMap.newKeySet();
    private final Set<String> answered = ConcurrentHashMap.newKeySet();
    private final AtomicLong holdNextMs = new AtomicLong();
    private final AtomicLong delayNextAnswerMs = new AtomicLong();
    private final AtomicBoolean failNext = new AtomicBoolean();

    private StandInProvider(Flaw flaw) throws Exception {
        this.flaw = flaw;
        try {
            this.server = vertx.createHttpServer().requestHandler(this::handle).listen(0, "127.0.0.1")
                    .toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            vertx.close();
            throw e;
        }
    }

    static StandInProvider start(Flaw flaw) throws Exception {
        return new StandInProvider(flaw);
    }

    /** The next send is held this long inside the provider before it is applied. */
    void holdNext(long ms) {
        holdNextMs.set(ms);
    }

    /** The next send executes at once, and its answer leaves this much later. */
    void delayNextAnswer(long ms) {
        delayNextAnswerMs.set(ms);
    }

    /** The next send is answered 500 before anything executes. */
    void failNext() {
        failNext.set(true);
    }

    URI base() {
        return URI.create("http://127.0.0.1:" + server.actualPort());
    }

    /** The stand-in's clock: the real one, or behind it for {@link Flaw#CLOCK_BEHIND}. */
    private Instant now() {
        return flaw == Flaw.CLOCK_BEHIND ? Instant.now().minusMillis(CLOCK_BEHIND_MS) : Instant.now();
    }

    private void handle(HttpServerRequest request) {
        String path = request.path();
        if (request.method() == HttpMethod.POST && path.equals("/payments")) {
            request.body().onSuccess(body -> send(request, body.toString()));
        } else if (request.method() == HttpMethod.GET && path.startsWith("/payments/")) {
            lookup(request, path.substring("/payments/".length()));
        } else {
            answer(request, 404, null);
        }
    }

    private void send(HttpServerRequest request, String body) {
        String key = request.getHeader("Idempotency-Key");
        String notAfter = request.getHeader("Ledgerline-Not-After");
        Instant deadline;
        try {
            deadline = notAfter == null ? null : OffsetDateTime.parse(notAfter).toInstant();
        } catch (DateTimeParseException e) {
            deadline = null;
        }
        if (key == null || deadline == null || body.isBlank() || !body.contains("\"destination\"")) {
            answer(request, 400, "{\"status\":\"rejected\",\"reason\":\"malformed send\"}");
            return;
        }
        if (failNext.getAndSet(false)) {
            if (flaw == Flaw.REPLAYS_SAVED_ERROR) {
                savedErrors.add(key);
            }
            answer(request, 500, null);
            return;
        }
        if (savedErrors.contains(key)) {
            answer(request, 500, null);
            return;
        }
        if (flaw == Flaw.CHECKS_DEADLINE_ON_ARRIVAL && now().isAfter(deadline)) {
            answer(request, 412, "{\"status\":\"expired\"}");
            return;
        }
        if (flaw == Flaw.CONFLICT_WHILE_IN_FLIGHT && inFlight.contains(key)) {
            answer(request, 409, "{\"status\":\"in_progress\"}");
            return;
        }
        long hold = holdNextMs.getAndSet(0);
        if (hold > 0) {
            inFlight.add(key);
            Instant held = deadline;
            vertx.setTimer(hold, timer -> {
                inFlight.remove(key);
                apply(request, key, held, body);
            });
        } else {
            apply(request, key, deadline, body);
        }
    }

    private void apply(HttpServerRequest request, String key, Instant deadline, String body) {
        int status;
        Payment payment;
        synchronized (this) {
            boolean checksWhenApplied = flaw != Flaw.IGNORES_DEADLINE && flaw != Flaw.CHECKS_DEADLINE_ON_ARRIVAL;
            if (checksWhenApplied && now().isAfter(deadline)) {
                answer(request, 412, "{\"status\":\"expired\"}");
                return;
            }
            Payment known = payments.get(key);
            boolean forgotten = known != null && flaw == Flaw.FORGETS_KEYS_EARLY
                    && known.at().plus(KEY_WINDOW.dividedBy(2)).isBefore(Instant.now());
            boolean rejectedBefore = known != null && "rejected".equals(known.status());
            if (known != null && flaw == Flaw.REJECTS_REUSED_KEY && !known.body().equals(body)) {
                answer(request, 400, "{\"reference\":\"" + key + "\",\"status\":\"rejected\",\"reason\":\"idempotency_error:"
                        + " keys can only be used with the same parameters\"}");
                return;
            }
            if (known != null && flaw != Flaw.EXECUTES_TWICE_PER_KEY && !forgotten
                    && !(rejectedBefore && flaw == Flaw.FORGETS_REJECTIONS)) {
                status = rejectedBefore ? 422 : 200;
                payment = known;
            } else if (body.contains("\"amount\":" + REJECTED_AMOUNT + ",") && known == null) {
                payment = new Payment("rejected", 0, Instant.now(), body);
                payments.put(key, payment);
                status = 422;
            } else {
                payment = new Payment("completed", (known == null ? 0 : known.executions()) + 1, Instant.now(), body);
                payments.put(key, payment);
                status = 201;
            }
        }
        String view = view(key, payment);
        long delay = delayNextAnswerMs.getAndSet(0);
        if (delay > 0) {
            vertx.setTimer(delay, timer -> deliver(request, key, status, view));
        } else {
            deliver(request, key, status, view);
        }
    }

    /** The answer to an applied send; the flawed books of {@link Flaw#LOOKUP_MISSES_UNANSWERED} learn of it only now. */
    private void deliver(HttpServerRequest request, String key, int status, String view) {
        if (!request.response().closed()) {
            answered.add(key);
        }
        answer(request, status, view);
    }

    private void lookup(HttpServerRequest request, String key) {
        Payment known = payments.get(key);
        boolean hidden = flaw == Flaw.LOOKUP_LIES
                || (flaw == Flaw.LOOKUP_LAGS && known != null && known.at().plusMillis(LAG_MS).isAfter(Instant.now()))
                || (flaw == Flaw.LOOKUP_MISSES_UNANSWERED && !answered.contains(key));
        if (known == null || hidden) {
            answer(request, 404, null);
        } else {
            answer(request, 200, view(key, known));
        }
    }

    private static String view(String key, Payment p) {
        return "{\"reference\":\"" + key + "\",\"status\":\"" + p.status() + "\",\"executions\":" + p.executions() + "}";
    }

    private void answer(HttpServerRequest request, int status, String json) {
        HttpServerResponse response = request.response();
        if (response.closed() || response.ended()) {
            return;
        }
        response.setStatusCode(status).putHeader("Date", HTTP_DATE.format(now().atOffset(ZoneOffset.UTC)));
        if (json == null) {
            response.end();
        } else {
            response.putHeader("Content-Type", "application/json").end(json);
        }
    }

    @Override
    public void close() throws Exception {
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
}
