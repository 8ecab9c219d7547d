package dev.ledgerline.transfers.ops;

import dev.ledgerline.transfers.config.StartupOrder;
import dev.ledgerline.transfers.metrics.Meters;
import dev.ledgerline.transfers.metrics.ServiceMeters;
import dev.ledgerline.transfers.transfer.TableStatistics;
import dev.ledgerline.transfers.transfer.TransferRepository;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Watches that PostgreSQL keeps the planner's statistics of the busy tables fresh, which the service's speed depends
 * on: each pool connection keeps a generic plan of every statement until something invalidates it, an
 * {@code ANALYZE} of a table it reads among them. A partition that filled after the plan was made, with nothing
 * analyzing it, is then read whole by the statements that look up one row in it (docs/capacity.md, "Plans on the hot
 * partitions"). Every {@code ledgerline.database.statistics-check-every} this looks at the partitions of
 * {@code transfers} and {@code transfer_events} and at {@code transfer_keys}
 * ({@link TransferRepository#statistics()}) and exports for how long the table due longest has waited for its analyze
 * ({@code ledgerline_database_statistics_due_seconds}; 0: none is due), and logs a warning once it passes
 * {@link #WARN_AFTER}. With autovacuum on it stays around a minute at most; it grows while autovacuum is off or behind.
 */
@Startup(StartupOrder.BEFORE_SCHEDULER)
@ApplicationScoped
public class StatisticsWatch {

    private static final Logger LOG = Logger.getLogger(StatisticsWatch.class);

    /** Long past autovacuum's naptime (a minute) and an analyze of a partition (seconds: it reads a sample). */
    static final Duration WARN_AFTER = Duration.ofMinutes(15);

    private final TransferRepository transfers;
    private final StaleStatistics stale = new StaleStatistics();
    private final AtomicLong dueSeconds = new AtomicLong();
    private boolean warned;

    public StatisticsWatch(TransferRepository transfers, @ServiceMeters MeterRegistry metrics) {
        this.transfers = transfers;
        Meters.DATABASE_STATISTICS_DUE.gauge(metrics, dueSeconds, AtomicLong::get);
    }

    @Scheduled(every = "${ledgerline.database.statistics-check-every}", delayed = "3s",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP, identity = "ledgerline-statistics")
    Uni<Void> look() {
        return transfers.statistics()
                .invoke(this::report)
                .onFailure().invoke(e -> LOG.debugf("step=statistics the look failed: %s", e))
                .onFailure().recoverWithNull()
                .replaceWithVoid();
    }

    private synchronized void report(List<TableStatistics> tables) {
        StaleStatistics.Longest longest = stale.look(tables, System.nanoTime());
        dueSeconds.set(longest.seconds());
        boolean late = longest.nanos() >= WARN_AFTER.toNanos();
        if (late && !warned) {
            LOG.warnf("step=statistics table=%s due_seconds=%d its statistics are due for an ANALYZE that has not come:"
                    + " autovacuum is off or behind, and the plans the pool's connections keep may read whole partitions"
                    + " (docs/capacity.md, \"Plans on the hot partitions\")", longest.name(), longest.seconds());
        }
        warned = late;
    }
}
