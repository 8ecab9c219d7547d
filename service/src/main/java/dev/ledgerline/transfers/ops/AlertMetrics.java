package dev.ledgerline.transfers.ops;

import dev.ledgerline.transfers.config.StartupOrder;
import dev.ledgerline.transfers.metrics.Meters;
import dev.ledgerline.transfers.metrics.ServiceMeters;
import dev.ledgerline.transfers.pipeline.PipelineMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.arc.ClientProxy;
import io.quarkus.runtime.Startup;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.List;

/**
 * Every metric the alert table of docs/operating.md (and {@code ops/alerts.yml}) alerts on exists, with its HELP text,
 * from the moment the service starts. A counter that first appears when it first counts cannot fire a
 * {@code rate(...) > 0} or {@code increase(...)} rule for that first event, and an absent series looks
 * the same as a healthy one.
 *
 * <p>The series are the {@link Meters#alerted()} ones of the catalogue. Micrometer hands back the same meter for the
 * same name and tags, so the code that counts ({@code PipelineMetrics}, {@code IdempotencyService}, {@code Reconciler},
 * {@code TransferProcessor}, {@code TransferService}) increments the counters registered here; both build them from
 * the same {@link Meters} entry, so their HELP text and tag keys agree whichever registers first.
 */
@Startup(StartupOrder.ALERT_SERIES)
@ApplicationScoped
public class AlertMetrics {

    public AlertMetrics(@ServiceMeters MeterRegistry registry, TransferGauges gauges, PipelineMetrics pipeline) {
        for (Meters meter : Meters.values()) {
            for (List<String> series : meter.alerted()) {
                meter.counter(series.toArray(String[]::new)).register(registry);
            }
        }
        // these two register their meters (open transfers and their age, the end-to-end latency histogram) when
        // created; normal-scoped beans are created on first use, which may be seconds or a first transfer away
        ClientProxy.unwrap(gauges);
        ClientProxy.unwrap(pipeline);
    }
}
