package dev.ledgerline.transfers.pipeline;

import dev.ledgerline.transfers.config.StartupOrder;
import dev.ledgerline.transfers.metrics.Meters;
import dev.ledgerline.transfers.metrics.ServiceMeters;
import dev.ledgerline.transfers.transfer.TransferStatus;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.runtime.Startup;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.EnumMap;
import java.util.Map;

/** What the pipeline reports when a transfer reaches a final status: how many, and how long it took end to end. */
@Startup(StartupOrder.BEFORE_SCHEDULER)
@ApplicationScoped
public class PipelineMetrics {

    private final Timer endToEnd;
    /** {@code ledgerline.transfers.finished} per final status, built once. */
    private final Map<TransferStatus, Counter> finished = new EnumMap<>(TransferStatus.class);
    private final Counter staleWrites;

    public PipelineMetrics(@ServiceMeters MeterRegistry metrics) {
        for (TransferStatus status : TransferStatus.values()) {
            if (status.isTerminal()) {
                finished.put(status, Meters.TRANSFERS_FINISHED.counter(status.db()).register(metrics));
            }
        }
        this.staleWrites = Meters.FENCE_STALE.counter().register(metrics);
        this.endToEnd = Meters.PIPELINE_LATENCY.timer()
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofMillis(5))
                .maximumExpectedValue(Duration.ofMinutes(10))
                .register(metrics);
    }

    void finished(TransferStatus status, OffsetDateTime createdAt) {
        finished.get(status).increment();
        if (createdAt != null) {
            Duration took = Duration.between(createdAt, OffsetDateTime.now());
            endToEnd.record(took.isNegative() ? Duration.ZERO : took);
        }
    }

    /** A transfer its owner cancelled: finished without a send (no end-to-end latency: nothing was processed). */
    public void cancelled() {
        finished.get(TransferStatus.CANCELLED).increment();
    }

    void staleWrite() {
        staleWrites.increment();
    }
}
