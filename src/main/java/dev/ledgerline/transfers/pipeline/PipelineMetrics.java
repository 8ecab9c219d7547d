package dev.ledgerline.transfers.pipeline;

import dev.ledgerline.transfers.transfer.TransferStatus;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.runtime.Startup;
import jakarta.enterprise.context.ApplicationScoped;

import jakarta.interceptor.Interceptor;
import java.time.Duration;
import java.time.OffsetDateTime;

/** What the pipeline reports when a transfer reaches a final status: how many, and how long it took end to end. */
// built at start-up, before the scheduler starts, rather than lazily on an event loop at first use
@Startup(Interceptor.Priority.PLATFORM_BEFORE - 1)
@ApplicationScoped
public class PipelineMetrics {

    private final MeterRegistry metrics;
    private final Timer endToEnd;

    public PipelineMetrics(MeterRegistry metrics) {
        this.metrics = metrics;
        this.endToEnd = Timer.builder("ledgerline.pipeline.latency")
                .description("From accepted to sent or failed")
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofMillis(5))
                .maximumExpectedValue(Duration.ofMinutes(10))
                .register(metrics);
    }

    void finished(TransferStatus status, OffsetDateTime createdAt) {
        metrics.counter("ledgerline.transfers.finished", "status", status.db()).increment();
        if (createdAt != null) {
            Duration took = Duration.between(createdAt, OffsetDateTime.now());
            endToEnd.record(took.isNegative() ? Duration.ZERO : took);
        }
    }

    void staleWrite() {
        metrics.counter("ledgerline.fence.stale").increment();
    }
}
