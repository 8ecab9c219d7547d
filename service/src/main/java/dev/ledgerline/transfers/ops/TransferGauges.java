package dev.ledgerline.transfers.ops;

import dev.ledgerline.transfers.config.StartupOrder;
import dev.ledgerline.transfers.metrics.Meters;
import dev.ledgerline.transfers.metrics.ServiceMeters;
import dev.ledgerline.transfers.transfer.Open;
import dev.ledgerline.transfers.transfer.TransferRepository;
import dev.ledgerline.transfers.transfer.TransferStatus;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Gauges read from the database every few seconds, cheaply: only the open (non-terminal) transfers,
 * which the partial indexes cover. Finished transfers are counted as they finish
 * ({@code ledgerline_transfers_finished_total}), not by scanning the table.
 *
 * <p>A parked transfer waits for an operator, not for the pipeline, and stays so until someone resumes it: it is
 * counted by {@code ledgerline_transfers_parked} alone. The open counts and the oldest open age leave it out, so
 * one parked transfer neither keeps the stuck-transfer alert firing nor hides a transfer that gets stuck after it.
 */
@Startup(StartupOrder.BEFORE_SCHEDULER)
@ApplicationScoped
public class TransferGauges {

    private static final Set<TransferStatus> OPEN = EnumSet.of(TransferStatus.PENDING, TransferStatus.PROCESSING,
            TransferStatus.RECONCILING);

    private final TransferRepository transfers;
    private final Map<TransferStatus, AtomicLong> counts = new EnumMap<>(TransferStatus.class);
    private final AtomicLong oldestSeconds = new AtomicLong();
    private final AtomicLong parked = new AtomicLong();

    public TransferGauges(TransferRepository transfers, @ServiceMeters MeterRegistry metrics) {
        this.transfers = transfers;
        for (TransferStatus status : OPEN) {
            AtomicLong value = new AtomicLong();
            counts.put(status, value);
            Meters.TRANSFERS_OPEN.gauge(metrics, value, AtomicLong::get, status.name().toLowerCase());
        }
        Meters.TRANSFERS_OLDEST_OPEN_AGE.gauge(metrics, oldestSeconds, AtomicLong::get);
        Meters.TRANSFERS_PARKED.gauge(metrics, parked, AtomicLong::get);
    }

    @Scheduled(every = "10s", delayed = "2s",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP, identity = "ledgerline-gauges")
    Uni<Void> refresh() {
        return transfers.open()
                .invoke(open -> {
                    Map<TransferStatus, Long> seen = new EnumMap<>(TransferStatus.class);
                    double oldest = 0;
                    long parkedNow = 0;
                    for (Open o : open) {
                        seen.put(o.status(), o.count());
                        oldest = Math.max(oldest, o.oldestSeconds());
                        parkedNow += o.parked();
                    }
                    counts.forEach((status, value) -> value.set(seen.getOrDefault(status, 0L)));
                    oldestSeconds.set((long) oldest);
                    parked.set(parkedNow);
                })
                .onFailure().recoverWithNull()
                .replaceWithVoid();
    }
}
