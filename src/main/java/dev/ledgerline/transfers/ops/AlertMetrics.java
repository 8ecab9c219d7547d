package dev.ledgerline.transfers.ops;

import dev.ledgerline.transfers.pipeline.PipelineMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.arc.ClientProxy;
import io.quarkus.runtime.Startup;
import jakarta.interceptor.Interceptor;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * Every metric README's alert table (and {@code ops/alerts.yml}) alerts on exists, with its HELP text,
 * from the moment the service starts. A counter that first appears when it first counts cannot fire a
 * {@code rate(...) > 0} or {@code increase(...)} rule for that first event, and an absent series looks
 * the same as a healthy one.
 *
 * <p>Micrometer hands back the same meter for the same name and tags, so the code that counts
 * ({@code PipelineMetrics}, {@code IdempotencyService}, {@code Sweeper}, {@code TransferProcessor},
 * {@code TransferResource}) increments the counters registered here; this bean only registers them
 * first, and with the same tag keys those classes use (Prometheus refuses one name with two tag sets). It starts
 * before those classes, which build their meters at start-up too: the first registration decides the HELP text.
 */
@Startup(Interceptor.Priority.PLATFORM_BEFORE - 2)
@ApplicationScoped
public class AlertMetrics {

    /** Name, tags and HELP of every counter the alert rules read; the rules name exactly these series. */
    record Alerted(String name, String help, String... tags) {
    }

    static final Alerted[] COUNTERS = {
            new Alerted("ledgerline.fence.stale",
                    "Final writes refused by the version fence: a worker paused past its lease (GC, CPU starvation)"),
            new Alerted("ledgerline.idempotency",
                    "Idempotency decisions by path (fast: Redis, db: PostgreSQL) and result; redis_unavailable means the service runs on PostgreSQL alone",
                    "path", "db", "result", "redis_unavailable"),
            new Alerted("ledgerline.reconciliations",
                    "Reconciler lookups at the provider by result; lookup_error means the provider's lookup failed too, parked that a transfer waits for an operator",
                    "result", "lookup_error"),
            new Alerted("ledgerline.provider.send",
                    "Sends to the payment provider by outcome; unknown is a timeout, 5xx or broken connection, resolved by lookup; refused an unexplained 4xx",
                    "outcome", "unknown"),
            new Alerted("ledgerline.reconciliations", null, "result", "parked"),
            new Alerted("ledgerline.provider.send", null, "outcome", "refused"),
            new Alerted("ledgerline.provider.send", null, "outcome", "completed"),
            new Alerted("ledgerline.provider.send", null, "outcome", "rejected"),
            new Alerted("ledgerline.transfers.requests",
                    "POST /v1/transfers answers by outcome; conflict means a retry arrived while the first request was in flight",
                    "outcome", "conflict"),
            new Alerted("ledgerline.transfers.requests", null, "outcome", "created"),
    };

    public AlertMetrics(MeterRegistry registry, TransferGauges gauges, PipelineMetrics pipeline) {
        for (Alerted counter : COUNTERS) {
            Counter.builder(counter.name()).description(counter.help()).tags(counter.tags()).register(registry);
        }
        // these two register their meters (open transfers and their age, the end-to-end latency histogram) when
        // created; normal-scoped beans are created on first use, which may be seconds or a first transfer away
        ClientProxy.unwrap(gauges);
        ClientProxy.unwrap(pipeline);
    }
}
