package dev.ledgerline.transfers.pipeline;

import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.transfers.config.StartupOrder;
import dev.ledgerline.transfers.metrics.Meters;
import dev.ledgerline.transfers.metrics.ServiceMeters;
import dev.ledgerline.transfers.transfer.TransferRepository;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import io.vertx.core.Vertx;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The overload bound: how many accepted transfers wait in {@code pending}, across every instance, and whether
 * that is beyond {@code ledgerline.overload.max-pending}. While it is, new transfers are refused before
 * anything is written (503 + Retry-After), so a burst above capacity leaves at most the bound behind it, and
 * that drains in bounded time once the burst stops (docs/operating.md "Overload").
 *
 * <p>Counted in the background every {@code check-every}, never on a request: a refusal costs one volatile
 * read. The count stops at the bound plus one, so it costs the same however deep the backlog is. When the
 * database cannot answer, the last count stands (requests then fail on their own statements anyway).
 *
 * <p>A Vert.x periodic timer, not {@code @Scheduled}: Quarkus's scheduler runs an {@code every} below one second
 * only once a second, and the default period is 500 ms. The timer fires on an event loop and the count is a
 * non-blocking statement; a tick that finds the previous count still running is skipped.
 * {@code ledgerline_overload_counts_total} counts the counts made.
 */
@Startup(StartupOrder.BEFORE_SCHEDULER)
@Singleton
public class Backlog {

    private static final Logger LOG = Logger.getLogger(Backlog.class);
    /** The first count waits for start-up to finish, as the other background passes do. */
    private static final Duration FIRST_COUNT_AFTER = Duration.ofSeconds(1);

    private final TransferRepository transfers;
    private final Vertx vertx;
    private final int maxPending;
    private final AtomicLong pending = new AtomicLong();
    private final AtomicBoolean counting = new AtomicBoolean();
    private final Counter counts;
    private final long timer;
    private volatile boolean overloaded;

    public Backlog(TransferRepository transfers, LedgerlineConfig config, @ServiceMeters MeterRegistry metrics, Vertx vertx) {
        this.transfers = transfers;
        this.vertx = vertx;
        this.maxPending = config.overload().maxPending();
        Meters.OVERLOAD_PENDING.gauge(metrics, pending, AtomicLong::get);
        Meters.OVERLOAD_REFUSING.gauge(metrics, this, b -> b.overloaded ? 1 : 0);
        this.counts = Meters.OVERLOAD_COUNTS.counter().register(metrics);
        long period = config.overload().checkEvery().toMillis();
        if (period < 1) {
            throw new IllegalStateException("ledgerline.overload.check-every must be at least 1 ms, not "
                    + config.overload().checkEvery() + "; ledgerline.overload.max-pending=0 turns the bound off");
        }
        this.timer = maxPending <= 0 ? -1 : vertx.setPeriodic(FIRST_COUNT_AFTER.toMillis(), period, id -> count());
    }

    /** Whether new transfers are refused right now. */
    public boolean overloaded() {
        return overloaded;
    }

    @PreDestroy
    void stop() {
        if (timer >= 0) {
            vertx.cancelTimer(timer);
        }
    }

    private void count() {
        if (!counting.compareAndSet(false, true)) {
            return; // the previous count is still running: this tick is skipped, not queued
        }
        transfers.countPending(maxPending + 1L)
                .invoke(n -> {
                    counts.increment();
                    pending.set(n);
                    boolean now = n > maxPending;
                    if (now != overloaded) {
                        LOG.infof("step=admission %s: %d pending transfers, bound %d", now
                                ? "refusing new transfers" : "accepting new transfers again", n, maxPending);
                    }
                    overloaded = now;
                })
                .onFailure().invoke(e -> LOG.debugf("step=admission could not count the backlog, keeping the last count: %s", e.toString()))
                .onTermination().invoke(() -> counting.set(false))
                .subscribe().with(n -> { }, e -> { });
    }
}
