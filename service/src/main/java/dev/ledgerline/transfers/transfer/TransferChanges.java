package dev.ledgerline.transfers.transfer;

import dev.ledgerline.transfers.config.LedgerlineConfig;
import io.quarkus.runtime.ShutdownDelayInitiatedEvent;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.pgclient.pubsub.PgSubscriber;
import io.vertx.pgclient.PgConnectOptions;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Wakes long polls when a transfer changes, on any instance: the database announces every transition
 * on the {@code transfer_changes} channel (trigger {@code transfers_notify}), and this instance's one
 * listening connection hands each announcement to the requests waiting for that transfer. Nothing here
 * polls the database; a missed announcement (listener reconnecting) only makes a poll wait its full time.
 */
@ApplicationScoped
public class TransferChanges {

    private static final Logger LOG = Logger.getLogger(TransferChanges.class);
    static final String CHANNEL = "transfer_changes";

    /** A waiting request: woken by the first announced version above {@code after}. */
    private record Waiter(long after, UniEmitter<? super Long> emitter) {
    }

    private final Map<UUID, Set<Waiter>> waiters = new ConcurrentHashMap<>();
    private final AtomicInteger waiting = new AtomicInteger();
    private final Vertx vertx;
    private final String url;
    private final Optional<String> user;
    private final Optional<String> password;
    private final PostgresTls tls;
    private final int maxWaiters;
    private final AdoptedServer adopted;
    private PgSubscriber subscriber;
    /** Shutdown has begun: waits end at once, so no long poll holds the instance up for its full 30 s. */
    private volatile boolean closing;

    public TransferChanges(Vertx vertx,
                           @ConfigProperty(name = "quarkus.datasource.reactive.url") String url,
                           @ConfigProperty(name = "quarkus.datasource.username") Optional<String> user,
                           @ConfigProperty(name = "quarkus.datasource.password") Optional<String> password,
                           PostgresTls tls,
                           LedgerlineConfig config,
                           AdoptedServer adopted) {
        this.vertx = vertx;
        this.adopted = adopted;
        this.url = url;
        this.user = user;
        this.password = password;
        this.tls = tls;
        this.maxWaiters = config.longPoll().maxWaitingRequests();
    }

    void listen(@Observes StartupEvent start) {
        PgConnectOptions options = PgConnectOptions.fromUri(url);
        user.ifPresent(options::setUser);
        password.ifPresent(options::setPassword);
        // its own connection, outside the pool Quarkus configures: it must verify the server as the pool does
        tls.apply(options);
        // a lost connection is also the first sign that the server went away (a crash, a restart, a failover): until the
        // sweeper has seen the adopted server answer again, replays read their final rows. Only the loss itself (the
        // policy's first call, as the connection closes) says so: a later attempt that found the server down again
        // comes after what the sweeper may have learnt of a server answering since, and must not unlearn it
        subscriber = PgSubscriber.subscriber(vertx, options).reconnectPolicy(attempt -> {
            if (attempt == 0) {
                adopted.unknown();
            }
            return 1000L;
        });
        subscriber.channel(CHANNEL).handler(this::announce);
        subscriber.connect().subscribe().with(
                ok -> LOG.debugf("listening on %s", CHANNEL),
                e -> LOG.warnf("cannot listen on %s yet (%s); long polls wait their full time until it can", CHANNEL, e.toString()));
    }

    void stop(@Observes ShutdownEvent stop) {
        if (subscriber != null) {
            subscriber.closeAndForget();
        }
    }

    /**
     * Readiness is DOWN: every waiting request is answered now with the transfer as it is (the client polls
     * again, through another instance), and new waits end at once.
     */
    void closing(@Observes ShutdownDelayInitiatedEvent event) {
        closing = true;
        wakeAll();
    }

    private void wakeAll() {
        for (Set<Waiter> forTransfer : waiters.values()) {
            for (Waiter waiter : forTransfer) {
                waiter.emitter().complete(null);
            }
        }
    }

    private void announce(String payload) {
        int colon = payload.indexOf(':');
        if (colon < 0) {
            return;
        }
        UUID id;
        long version;
        try {
            id = UUID.fromString(payload.substring(0, colon));
            version = Long.parseLong(payload.substring(colon + 1));
        } catch (IllegalArgumentException garbled) {
            return;
        }
        Set<Waiter> forTransfer = waiters.get(id);
        if (forTransfer != null) {
            for (Waiter waiter : forTransfer) {
                if (version > waiter.after()) {
                    waiter.emitter().complete(version);
                }
            }
        }
    }

    /** Requests waiting on this instance right now (tests wait on this instead of guessing when a poll registered). */
    public int waiting() {
        return waiting.get();
    }

    /**
     * Completes with the first announced version above {@code after}, or never; the caller bounds it.
     * {@code null} item right away when too many requests are already waiting on this instance, or when it is
     * shutting down.
     */
    public Uni<Long> next(UUID id, long after) {
        return Uni.createFrom().emitter(emitter -> {
            if (closing) {
                emitter.complete(null);
                return;
            }
            if (waiting.incrementAndGet() > maxWaiters) {
                waiting.decrementAndGet();
                emitter.complete(null);
                return;
            }
            Waiter waiter = new Waiter(after, emitter);
            waiters.computeIfAbsent(id, k -> ConcurrentHashMap.newKeySet()).add(waiter);
            emitter.onTermination(() -> {
                waiting.decrementAndGet();
                waiters.computeIfPresent(id, (k, set) -> {
                    set.remove(waiter);
                    return set.isEmpty() ? null : set;
                });
            });
            if (closing) {
                // shutdown began while this waiter was being added: it may have missed the wake-up
                emitter.complete(null);
            }
        });
    }
}
