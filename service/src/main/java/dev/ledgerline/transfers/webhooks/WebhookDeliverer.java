package dev.ledgerline.transfers.webhooks;

import dev.ledgerline.transfers.config.InstanceId;
import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.transfers.config.StartupOrder;
import dev.ledgerline.transfers.events.EventFeed;
import dev.ledgerline.transfers.events.FeedEvent;
import dev.ledgerline.transfers.metrics.Meters;
import dev.ledgerline.transfers.metrics.ServiceMeters;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Pushes the event feed to every registered endpoint, at least once, on any number of instances. Each round an
 * instance leases the endpoints that are due and nobody holds ({@link WebhookRepository#LEASE}), and for each, side by
 * side: reads the feed past the endpoint's cursor (the feed's own statement and order), and sends the events one after
 * another. A 2xx moves the cursor past the event in the statement that checks the lease token and renews the lease;
 * anything else (another status, a timeout, a refused connection, an address the policy refuses) records the attempt,
 * keeps the cursor and sets the next attempt after an exponential back-off with jitter. The endpoint's later events
 * wait behind the failing one (head-of-line blocking), which is what keeps a transfer's versions in order.
 *
 * <p>No two instances send to one endpoint at once: an instance sends only while its lease, counted on its own
 * monotonic clock from before the lease was written, outlasts the request timeout; another instance can lease the
 * endpoint only after the database's expiry, which is later. An instance that dies leaves the cursor before the event
 * it was sending, and the next lease sends it again.
 *
 * <p>The scheduler's tick (at least a second) paces an idle deliverer; a retry, and the next page after a full one,
 * get a round of their own on a timer, so a back-off is what it says rather than rounded up to the next tick.
 */
@Startup(StartupOrder.BEFORE_SCHEDULER)
@ApplicationScoped
public class WebhookDeliverer {

    private static final Logger LOG = Logger.getLogger(WebhookDeliverer.class);

    private final WebhookRepository endpoints;
    private final EventFeed feed;
    private final WebhookSender sender;
    private final PayloadWriter payloads;
    private final LedgerlineConfig.Webhooks settings;
    private final String instance;
    private final Counter delivered;
    private final Counter failed;
    private final Counter markedFailing;
    private final AtomicLong failingEndpoints = new AtomicLong();
    private final Vertx vertx;
    private volatile boolean stopped;

    public WebhookDeliverer(WebhookRepository endpoints, EventFeed feed, WebhookSender sender, PayloadWriter payloads,
                            LedgerlineConfig config, InstanceId instance, @ServiceMeters MeterRegistry metrics, Vertx vertx) {
        this.vertx = vertx;
        this.endpoints = endpoints;
        this.feed = feed;
        this.sender = sender;
        this.payloads = payloads;
        this.settings = config.webhooks();
        this.instance = instance.value();
        this.delivered = Meters.WEBHOOK_DELIVERIES.counter("delivered").register(metrics);
        this.failed = Meters.WEBHOOK_DELIVERIES.counter("failed").register(metrics);
        this.markedFailing = Meters.WEBHOOK_ENDPOINTS_MARKED_FAILING.counter().register(metrics);
        Meters.WEBHOOK_ENDPOINTS_FAILING.gauge(metrics, failingEndpoints, AtomicLong::get);
    }

    @Scheduled(every = "${ledgerline.webhooks.deliver-every}", delayed = "1s",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP, identity = "ledgerline-webhooks")
    Uni<Void> tick() {
        return round()
                .onFailure().invoke(e -> LOG.warnf("step=webhooks round failed, the next one retries: %s", e.toString()))
                .onFailure().recoverWithNull()
                .replaceWithVoid();
    }

    @PreDestroy
    void stop() {
        stopped = true;
    }

    /**
     * A round of its own in {@code after}, so that a retry is not late by up to a tick. Only this instance's: if it
     * stops first, another instance's tick finds the endpoint due.
     */
    private void wakeUpAfter(Duration after) {
        if (stopped) {
            return;
        }
        vertx.setTimer(Math.max(1, after.toMillis() + 5), id -> {
            if (!stopped) {
                tick().subscribe().with(nothing -> { }, e -> { });
            }
        });
    }

    /** One round: lease what is due, deliver to each, then refresh the failing gauge. The number of endpoints leased. */
    public Uni<Integer> round() {
        return endpoints.lease(instance, settings.lease(), settings.endpointsPerRound())
                .flatMap(leases -> Multi.createFrom().iterable(leases)
                        .onItem().transformToUniAndMerge(lease -> deliver(lease)
                                .onFailure().invoke(e -> LOG.warnf("step=webhooks endpoint=%s delivery stopped, its lease "
                                        + "expires and the next round retries: %s", lease.id(), e.toString()))
                                .onFailure().recoverWithNull())
                        .collect().asList()
                        .replaceWith(leases.size()))
                .call(n -> endpoints.failing().invoke(failingEndpoints::set));
    }

    private Uni<Void> deliver(Lease lease) {
        return feed.next(lease.cursor(), settings.batch())
                .flatMap(events -> send(lease, events, 0).invoke(() -> {
                    if (events.size() == settings.batch()) {
                        wakeUpAfter(Duration.ZERO); // more may be waiting past this page
                    }
                }))
                .call(() -> endpoints.prune(lease.id(), settings.keepAttempts()));
    }

    /** Sends {@code events[i..]} in order under {@code lease}; stops at the first failure or a lost lease. */
    private Uni<Void> send(Lease lease, List<FeedEvent> events, int i) {
        if (i == events.size()) {
            return endpoints.release(lease);
        }
        long left = lease.localDeadline() - System.nanoTime();
        if (left < settings.requestTimeout().toNanos() + Duration.ofSeconds(1).toNanos()) {
            // too little lease left to finish a request inside it: give it back, the next round renews
            return endpoints.release(lease);
        }
        FeedEvent event = events.get(i);
        String body = payloads.json(event);
        long t = Instant.now().getEpochSecond();
        Map<String, String> headers = Map.of(WebhookSignature.EVENT_ID_HEADER, event.id(),
                WebhookSignature.HEADER, WebhookSignature.header(lease.secret(), lease.previousSecret(), t, body));
        int attempt = lease.attempts() + 1;
        return sender.send(lease.url(), body, headers).flatMap(outcome -> {
            if (outcome.delivered()) {
                delivered.increment();
                return endpoints.advance(lease, event, attempt, outcome.status(), outcome.latencyMs(), settings.lease(), instance)
                        .flatMap(renewed -> {
                            if (renewed == null) {
                                LOG.infof("step=webhooks endpoint=%s lease lost after event %s; its holder goes on", lease.id(), event.id());
                                return Uni.createFrom().voidItem();
                            }
                            return send(renewed, events, i + 1);
                        });
            }
            failed.increment();
            Duration backoff = backoff(attempt);
            return endpoints.fail(lease, event.id(), outcome.status(), outcome.latencyMs(), outcome.error(),
                            settings.giveUpAfter(), backoff, instance)
                    .invoke(result -> {
                        if (result != null) {
                            wakeUpAfter(backoff);
                        }
                        LOG.debugf("step=webhooks endpoint=%s event=%s attempt=%d failed (%s), next in %s", lease.id(),
                                event.id(), attempt, outcome.error(), backoff);
                        if (result != null && result.failing() && !lease.failing()) {
                            markedFailing.increment();
                            LOG.warnf("step=webhooks endpoint=%s marked failing: event %s has failed for longer than %s",
                                    lease.id(), event.id(), settings.giveUpAfter());
                        }
                    })
                    .replaceWithVoid();
        });
    }

    /**
     * The wait before attempt {@code failed + 1}: first-backoff doubled per failed attempt, at most max-backoff, of
     * which a random half is taken off (instances and endpoints do not retry in step).
     */
    Duration backoff(int failed) {
        long first = settings.firstBackoff().toMillis();
        long max = settings.maxBackoff().toMillis();
        long full = failed >= 31 ? max : Math.min(max, first << Math.max(0, failed - 1));
        long half = full / 2;
        return Duration.ofMillis(full - ThreadLocalRandom.current().nextLong(half + 1));
    }

    /** Endpoints marked failing, as the last round counted them. */
    public long failingEndpoints() {
        return failingEndpoints.get();
    }
}
