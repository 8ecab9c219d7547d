package dev.ledgerline.transfers.provider;

import dev.ledgerline.transfers.config.StartupOrder;
import dev.ledgerline.transfers.metrics.Meters;
import dev.ledgerline.transfers.metrics.ServiceMeters;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import dev.ledgerline.transfers.config.Breaker;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * {@code ledgerline_provider_breaker_open{breaker="send"|"lookup"}}: 1 while the provider breaker of sends or of
 * lookups is not closed. Read from the breakers ({@link ProviderGuards}) when the metrics are scraped, so it costs a
 * call to the provider nothing.
 */
@Startup(StartupOrder.BEFORE_SCHEDULER)
@ApplicationScoped
public class ProviderBreakerGauges {

    public ProviderBreakerGauges(ProviderGuards guards, @ServiceMeters MeterRegistry metrics) {
        Meters.PROVIDER_BREAKER_OPEN.gauge(metrics, guards, g -> open(g.sendState()), "send");
        Meters.PROVIDER_BREAKER_OPEN.gauge(metrics, guards, g -> open(g.lookupState()), "lookup");
    }

    private static double open(Breaker.State state) {
        return state == Breaker.State.CLOSED ? 0 : 1;
    }
}
