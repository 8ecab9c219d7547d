package dev.ledgerline.transfers.ops;

import dev.ledgerline.transfers.transfer.TransferRepository;
import dev.ledgerline.transfers.transfer.TransferStatus;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;

import jakarta.interceptor.Interceptor;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Gauges read from the database every few seconds, cheaply: only the open (non-terminal) transfers,
 * which the partial indexes cover. Finished transfers are counted as they finish
 * ({@code ledgerline_transfers_finished_total}), not by scanning the table.
 */
// built at start-up, before the scheduler starts, rather than lazily on an event loop at first use
@Startup(Interceptor.Priority.PLATFORM_BEFORE - 1)
@ApplicationScoped
public class TransferGauges {

    private static final Set<TransferStatus> OPEN = EnumSet.of(TransferStatus.PENDING, TransferStatus.PROCESSING,
            TransferStatus.RECONCILING);

    private final TransferRepository transfers;
    private final Map<TransferStatus, AtomicLong> counts = new EnumMap<>(TransferStatus.class);
    private final AtomicLong oldestSeconds = new AtomicLong();

    public TransferGauges(TransferRepository transfers, MeterRegistry metrics) {
        this.transfers = transfers;
        for (TransferStatus status : OPEN) {
            AtomicLong value = new AtomicLong();
            counts.put(status, value);
            Gauge.builder("ledgerline.transfers.open", value, AtomicLong::get)
                    .tag("status", status.name().toLowerCase()).description("Transfers not yet sent or failed")
                    .register(metrics);
        }
        Gauge.builder("ledgerline.transfers.oldest.open.age", oldestSeconds, AtomicLong::get)
                .baseUnit("seconds").description("Age of the oldest transfer not yet sent or failed").register(metrics);
    }

    @Scheduled(every = "10s", delayed = "2s",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP, identity = "ledgerline-gauges")
    Uni<Void> refresh() {
        return transfers.open()
                .invoke(open -> {
                    Map<TransferStatus, Long> seen = new EnumMap<>(TransferStatus.class);
                    double oldest = 0;
                    for (TransferRepository.Open o : open) {
                        seen.put(o.status(), o.count());
                        oldest = Math.max(oldest, o.oldestSeconds());
                    }
                    counts.forEach((status, value) -> value.set(seen.getOrDefault(status, 0L)));
                    oldestSeconds.set((long) oldest);
                })
                .onFailure().recoverWithNull()
                .replaceWithVoid();
    }
}
