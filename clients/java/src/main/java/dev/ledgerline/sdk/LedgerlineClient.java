package dev.ledgerline.sdk;

import dev.ledgerline.client.ApiClient;
import dev.ledgerline.client.ApiException;
import dev.ledgerline.client.ApiResponse;
import dev.ledgerline.client.api.OperationsApi;
import dev.ledgerline.client.api.TransfersApi;
import dev.ledgerline.client.model.EventPage;
import dev.ledgerline.client.model.FeedEvent;
import dev.ledgerline.client.model.Transfer;
import dev.ledgerline.client.model.TransferPage;
import dev.ledgerline.client.model.TransferRequest;
import dev.ledgerline.client.model.TransferStatus;

import java.net.URI;
import java.net.http.HttpHeaders;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The hand-written half of the Java SDK, over the client generated from {@code openapi.yaml}
 * ({@code dev.ledgerline.client}): it decides when to send again, with which key and after how long,
 * and follows a transfer to its final status. Blocking, for internal services; safe to share between threads.
 *
 * <p>Guarantees: one {@code Idempotency-Key} per intent, reused on every attempt; a retry only after a
 * network error, a timeout, {@code 409}, {@code 429} or {@code 503} (and {@code 502}/{@code 504} from a
 * gateway in front of the service), never after {@code 400}, {@code 401}, {@code 403}, {@code 422} or any
 * other answer; the wait before a retry is the service's {@code Retry-After} when it sent one, otherwise
 * exponential backoff with full jitter; no attempt starts once the policy's budget is spent. The lookup by key
 * ({@link #findByIdempotencyKey}) is retried the same way.
 */
public final class LedgerlineClient {

    /** Statuses after which the same request, under the same key, may succeed. */
    public static final Set<Integer> RETRYABLE_STATUSES = Set.of(409, 429, 502, 503, 504);

    /** One retry about to happen: what caused it and how long the client waits. */
    public record RetryEvent(int attempt, String idempotencyKey, int status, String error, Duration delay, boolean fromRetryAfter) {
    }

    /** A created (or replayed) transfer and how it came about. */
    public record Created(Transfer transfer, String idempotencyKey, boolean replayed, String location, String etag, int attempts) {
    }

    private final TransfersApi api;
    /** The collection read of {@code GET /v1/transfers}, which the contract tags Operations; the lookup by key uses it. */
    private final OperationsApi collection;
    private final RetryPolicy policy;
    private final Consumer<RetryEvent> onRetry;

    private LedgerlineClient(ApiClient client, RetryPolicy policy, Consumer<RetryEvent> onRetry) {
        this.api = new TransfersApi(client);
        this.collection = new OperationsApi(client);
        this.policy = policy;
        this.onRetry = onRetry;
    }

    /** One attempt of a call that {@link #withRetries} repeats under one key. */
    @FunctionalInterface
    private interface Attempt<T> {
        T run(int attempt) throws ApiException;
    }

    /** A client for {@code baseUri} that asks {@code token} for a bearer token on every attempt. */
    public static LedgerlineClient create(URI baseUri, Supplier<String> token, RetryPolicy policy, Consumer<RetryEvent> onRetry) {
        ApiClient client = new ApiClient();
        client.updateBaseUri(baseUri.toString().replaceAll("/$", ""));
        client.setConnectTimeout(policy.attemptTimeout());
        client.setReadTimeout(policy.attemptTimeout());
        client.setRequestInterceptor(request -> request.header("Authorization", "Bearer " + token.get()));
        return new LedgerlineClient(client, policy, onRetry == null ? e -> { } : onRetry);
    }

    /** A fresh key for a new intent: a random UUID. */
    public static String newIdempotencyKey() {
        return UUID.randomUUID().toString();
    }

    /** Sends a new intent under a new key. */
    public Created createTransfer(TransferRequest request) {
        return createTransfer(request, newIdempotencyKey());
    }

    /**
     * Sends an intent under {@code idempotencyKey}; pass the key of an intent already sent (after a crash,
     * or after {@link RetryBudgetExhausted}) to continue it rather than start another.
     */
    public Created createTransfer(TransferRequest request, String idempotencyKey) {
        return withRetries(idempotencyKey, attempt -> {
            ApiResponse<Transfer> response = api.createTransferWithHttpInfo(idempotencyKey, request, null);
            Map<String, List<String>> headers = response.getHeaders();
            return new Created(response.getData(), idempotencyKey, "true".equals(header(headers, "Idempotent-Replayed")),
                    header(headers, "Location"), header(headers, "ETag"), attempt);
        });
    }

    /**
     * The transfer this client's principal created under {@code idempotencyKey}, or {@code null} when there is
     * none ({@code GET /v1/transfers?idempotencyKey=}). For a response that was lost: after a crash, or when
     * {@link RetryBudgetExhausted} left it open whether the intent arrived. {@code null} is no proof that the intent
     * failed — its first request may still be in flight — so continue it with {@link #createTransfer(TransferRequest,
     * String)} under the same key, never under a new one. Retried like a create; a refused lookup (for instance
     * {@code 400} for a key the header would refuse, or {@code 403}) is {@link TransferRejected}.
     */
    public Transfer findByIdempotencyKey(String idempotencyKey) {
        return withRetries(idempotencyKey, attempt -> {
            TransferPage page = collection.listTransfers(idempotencyKey, null, null, null, null);
            return page.getItems().isEmpty() ? null : page.getItems().get(0);
        });
    }

    /** A page of the event feed, and the cursor to ask with next (persist it once the events are processed). */
    public record EventBatch(List<FeedEvent> events, String cursor) {
    }

    /**
     * The events after {@code cursor} ({@code null}: from the oldest the feed keeps), at most {@code limit}, held by
     * the service up to {@code wait} (whole seconds, at most 30, below the policy's attempt timeout) while there is
     * none ({@code GET /v1/events}, group {@code transfers.read.all}). A follower that processes each batch and asks
     * again with its {@link EventBatch#cursor()} sees every transition once, each transfer's in version order, on
     * any number of service instances. Retried like a create; a cursor older than the feed keeps is
     * {@link TransferRejected} with status {@code 410}: start again without one and reconcile from the transfers.
     */
    public EventBatch nextEvents(String cursor, int limit, Duration wait) {
        String prefer = wait.isZero() ? null : "wait=" + wait.toSeconds();
        return withRetries("event-feed", attempt -> {
            EventPage page = collection.listEvents(cursor, limit, prefer);
            return new EventBatch(page.getEvents(), page.getNextCursor() == null ? cursor : page.getNextCursor());
        });
    }

    /**
     * Runs {@code call} until it answers, under the retry policy: after a network error or a retryable status it
     * waits ({@code Retry-After}, else backoff) and tries again, unless the wait would end past the budget.
     */
    private <T> T withRetries(String idempotencyKey, Attempt<T> call) {
        Instant deadline = Instant.now().plus(policy.budget());
        for (int attempt = 1; ; attempt++) {
            int status = 0;
            String error = null;
            Optional<Duration> retryAfter = Optional.empty();
            ApiException failure;
            try {
                return call.run(attempt);
            } catch (ApiException e) {
                failure = e;
                if (e.getCode() == 0) {
                    if (Thread.currentThread().isInterrupted()) {
                        throw new RetryBudgetExhausted(attempt, idempotencyKey, 0, e);
                    }
                    error = String.valueOf(e.getCause());
                } else if (RETRYABLE_STATUSES.contains(e.getCode())) {
                    status = e.getCode();
                    retryAfter = retryAfter(e.getResponseHeaders());
                } else {
                    throw new TransferRejected(e.getCode(), e.getResponseBody(), idempotencyKey);
                }
            }
            Duration delay = retryAfter.orElseGet(backoff(attempt));
            if (Instant.now().plus(delay).isAfter(deadline)) {
                throw new RetryBudgetExhausted(attempt, idempotencyKey, status, failure);
            }
            onRetry.accept(new RetryEvent(attempt, idempotencyKey, status, error, delay, retryAfter.isPresent()));
            pause(delay, attempt, idempotencyKey, status);
        }
    }

    /**
     * Follows a transfer until it is {@code sent} or {@code failed}. Each request carries the last
     * {@code ETag} in {@code If-None-Match} and {@code Prefer: wait=N}, so the service holds it until
     * something changes and an unchanged transfer costs one bodiless {@code 304} per N seconds.
     */
    public Transfer waitForFinal(UUID id, Duration budget) {
        int waitSeconds = 25;
        Instant deadline = Instant.now().plus(budget);
        String etag = null;
        Transfer last = null;
        int failures = 0;
        while (Instant.now().isBefore(deadline)) {
            try {
                ApiResponse<Transfer> response = api.getTransferWithHttpInfo(id, etag, "wait=" + waitSeconds);
                last = response.getData();
                etag = header(response.getHeaders(), "ETag");
                failures = 0;
                if (last.getStatus() == TransferStatus.SENT || last.getStatus() == TransferStatus.FAILED) {
                    return last;
                }
            } catch (ApiException e) {
                if (e.getCode() == 304) {
                    failures = 0;
                    continue;
                }
                if (e.getCode() != 0 && !RETRYABLE_STATUSES.contains(e.getCode())) {
                    throw new TransferRejected(e.getCode(), e.getResponseBody(), null);
                }
                failures++;
                Duration delay = retryAfter(e.getResponseHeaders()).orElseGet(backoff(failures));
                Duration left = Duration.between(Instant.now(), deadline);
                pause(delay.compareTo(left) < 0 ? delay : left, failures, null, e.getCode());
            }
        }
        throw new IllegalStateException("transfer " + id + " was not final within " + budget
                + " (last status: " + (last == null ? "unknown" : last.getStatus()) + ")");
    }

    /** Full jitter: a random wait between 0 and the exponential step, so clients retrying together spread out. */
    private Supplier<Duration> backoff(int attempt) {
        return () -> {
            long step = Math.min(policy.maxDelay().toMillis(), policy.baseDelay().toMillis() << Math.min(attempt - 1, 20));
            return Duration.ofMillis(ThreadLocalRandom.current().nextLong(step + 1));
        };
    }

    /** Retry-After as delay-seconds or an HTTP date; empty when absent or unreadable. */
    static Optional<Duration> retryAfter(HttpHeaders headers) {
        if (headers == null) {
            return Optional.empty();
        }
        return headers.firstValue("Retry-After").map(String::strip).flatMap(value -> {
            if (value.matches("\\d{1,9}")) {
                return Optional.of(Duration.ofSeconds(Long.parseLong(value)));
            }
            try {
                Duration until = Duration.between(Instant.now(), ZonedDateTime.parse(value, DateTimeFormatter.RFC_1123_DATE_TIME));
                return Optional.of(until.isNegative() ? Duration.ZERO : until);
            } catch (DateTimeParseException e) {
                return Optional.empty();
            }
        });
    }

    private static String header(Map<String, List<String>> headers, String name) {
        return headers.entrySet().stream()
                .filter(e -> e.getKey().equalsIgnoreCase(name) && !e.getValue().isEmpty())
                .map(e -> e.getValue().get(0))
                .findFirst().orElse(null);
    }

    private static void pause(Duration delay, int attempts, String key, int status) {
        try {
            Thread.sleep(delay.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RetryBudgetExhausted(attempts, key, status, e);
        }
    }
}
