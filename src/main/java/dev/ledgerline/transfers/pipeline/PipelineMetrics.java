package dev.ledgerline.transfers.pipeline;

import dev.ledgerline.transfers.transfer.TransferStatus;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.runtime.Startup;
import jakarta.enterprise.context.ApplicationScoped;

import jakarta.interceptor.Interceptor;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.EnumMap;
import java.util.Map;

/** What the pipeline reports when a transfer reaches a final status: how many, and how long it took end to end. */
// built at start-up, before the scheduler starts, rather than lazily on an event loop at first use
@Startup(Interceptor.Priority.PLATFORM_BEFORE - 1)
@ApplicationScoped
public class PipelineMetrics {

    private final Timer endToEnd;
    /** {@code ledgerline.transfers.finished} per final status, built once. */
    private final Map<TransferStatus, Counter> finished = new EnumMap<>(TransferStatus.class);
    private final Counter staleWrites;

    public PipelineMetrics(MeterRegistry metrics) {
        for (TransferStatus status : TransferStatus.values()) {
            if (status.isTerminal()) {
                finished.put(status, metrics.counter("ledgerline.transfers.finished", "status", status.db()));
            }
        }
        this.staleWrites = metrics.counter("ledgerline.fence.stale");
        this.endToEnd = Timer.builder("ledgerline.pipeline.latency")
                .description("From accepted to sent or failed")
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

    void staleWrite() {
        staleWrites.increment();
    }
}
