package dev.ledgerline.transfers.ops;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import jakarta.enterprise.context.ApplicationScoped;

import jakarta.interceptor.Interceptor;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
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

    enum Open { PENDING, PROCESSING, RECONCILING }

    static final String OPEN = """
            SELECT status, count(*) AS n, coalesce(extract(epoch FROM now() - min(created_at)), 0) AS oldest
              FROM transfers WHERE status IN ('pending', 'processing', 'reconciling') GROUP BY status""";

    private final Pool pool;
    private final Map<Open, AtomicLong> counts = new EnumMap<>(Open.class);
    private final AtomicLong oldestSeconds = new AtomicLong();

    public TransferGauges(Pool pool, MeterRegistry metrics) {
        this.pool = pool;
        for (Open status : Open.values()) {
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
        return pool.query(OPEN).execute()
                .ifNoItem().after(Duration.ofSeconds(5)).fail()
                .invoke(rows -> {
                    Map<Open, Long> seen = new EnumMap<>(Open.class);
                    double oldest = 0;
                    for (Row row : rows) {
                        seen.put(Open.valueOf(row.getString("status").toUpperCase()), row.getLong("n"));
                        oldest = Math.max(oldest, row.getNumeric("oldest").doubleValue());
                    }
                    counts.forEach((status, value) -> value.set(seen.getOrDefault(status, 0L)));
                    oldestSeconds.set((long) oldest);
                })
                .onFailure().recoverWithNull()
                .replaceWithVoid();
    }
}
