package dev.ledgerline.transfers.pipeline;

import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.transfers.transfer.TransferRepository;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.interceptor.Interceptor;
import org.jboss.logging.Logger;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The overload bound: how many accepted transfers wait in {@code pending}, across every instance, and whether
 * that is beyond {@code ledgerline.overload.max-pending}. While it is, new transfers are refused before
 * anything is written (503 + Retry-After), so a burst above capacity leaves at most the bound behind it, and
 * that drains in bounded time once the burst stops (README "Overload").
 *
 * <p>Counted in the background every {@code check-every}, never on a request: a refusal costs one volatile
 * read. The count stops at the bound plus one, so it costs the same however deep the backlog is. When the
 * database cannot answer, the last count stands (requests then fail on their own statements anyway).
 */
// built at start-up, before the scheduler starts, rather than lazily on an event loop at first use
@Startup(Interceptor.Priority.PLATFORM_BEFORE - 1)
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
        Gauge.builder("ledgerline.overload.pending", pending, AtomicLong::get)
                .description("Pending transfers across instances as last counted (stops at ledgerline.overload.max-pending + 1)")
                .register(metrics);
        Gauge.builder("ledgerline.overload.refusing", this, b -> b.overloaded ? 1 : 0)
                .description("1 while new transfers are refused because the pending backlog is beyond its bound")
                .register(metrics);
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
