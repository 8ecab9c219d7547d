package dev.ledgerline.transfers.pipeline;

import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.transfers.config.StartupOrder;
import dev.ledgerline.transfers.metrics.Meters;
import dev.ledgerline.transfers.transfer.TransferRepository;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

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
 */
@Startup(StartupOrder.BEFORE_SCHEDULER)
@ApplicationScoped
public class Backlog {

    private static final Logger LOG = Logger.getLogger(Backlog.class);

    private final TransferRepository transfers;
    private final int maxPending;
    private final AtomicLong pending = new AtomicLong();
    private volatile boolean overloaded;

    public Backlog(TransferRepository transfers, LedgerlineConfig config, MeterRegistry metrics) {
        this.transfers = transfers;
        this.maxPending = config.overload().maxPending();
        Meters.OVERLOAD_PENDING.gauge(pending, AtomicLong::get).register(metrics);
        Meters.OVERLOAD_REFUSING.gauge(this, b -> b.overloaded ? 1 : 0).register(metrics);
    }

    /** Whether new transfers are refused right now. */
    public boolean overloaded() {
        return overloaded;
    }

    @Scheduled(every = "${ledgerline.overload.check-every}", delayed = "1s",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP, identity = "ledgerline-backlog")
    Uni<Void> count() {
        if (maxPending <= 0) {
            return Uni.createFrom().voidItem();
        }
        return transfers.countPending(maxPending + 1L)
                .invoke(n -> {
                    pending.set(n);
                    boolean now = n > maxPending;
                    if (now != overloaded) {
                        LOG.infof("step=admission %s: %d pending transfers, bound %d", now
                                ? "refusing new transfers" : "accepting new transfers again", n, maxPending);
                    }
                    overloaded = now;
                })
                .onFailure().invoke(e -> LOG.debugf("step=admission could not count the backlog, keeping the last count: %s", e.toString()))
                .onFailure().recoverWithNull()
                .replaceWithVoid();
    }
}
