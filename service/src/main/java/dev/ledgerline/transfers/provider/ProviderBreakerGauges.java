package dev.ledgerline.transfers.provider;

import dev.ledgerline.transfers.config.StartupOrder;
import dev.ledgerline.transfers.metrics.Meters;
import dev.ledgerline.transfers.metrics.ServiceMeters;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import io.smallrye.faulttolerance.api.CircuitBreakerMaintenance;
import io.smallrye.faulttolerance.api.CircuitBreakerState;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * {@code ledgerline_provider_breaker_open{breaker="send"|"lookup"}}: 1 while the provider breaker of sends or of
 * lookups is not closed. Read from the breakers when the metrics are scraped, so it costs a call to the provider
 * nothing; SmallRye Fault Tolerance's own meters, which counted every call, are off (application.properties).
 */
@Startup(StartupOrder.BEFORE_SCHEDULER)
@ApplicationScoped
public class ProviderBreakerGauges {

    private final CircuitBreakerMaintenance breakers;

    public ProviderBreakerGauges(CircuitBreakerMaintenance breakers, @ServiceMeters MeterRegistry metrics) {
        this.breakers = breakers;
        Meters.PROVIDER_BREAKER_OPEN.gauge(metrics, this, g -> g.open(ProviderClient.SEND_BREAKER), "send");
        Meters.PROVIDER_BREAKER_OPEN.gauge(metrics, this, g -> g.open(ProviderClient.LOOKUP_BREAKER), "lookup");
    }

    private double open(String breaker) {
        return breakers.currentState(breaker) == CircuitBreakerState.CLOSED ? 0 : 1;
    }
}
