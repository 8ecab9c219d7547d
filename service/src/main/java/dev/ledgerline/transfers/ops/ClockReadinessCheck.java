package dev.ledgerline.transfers.ops;

import dev.ledgerline.transfers.pipeline.ClockWatch;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * The clocks in readiness: always UP, because a clock offset beyond the skew bound holds new sends on every
 * instance alike (they all read the same PostgreSQL and provider), and taking them out of the load balancer would
 * stop transfers from being accepted as well. The {@code clocks} detail says {@code ok} or {@code sends held}, and
 * why, for operators; {@code LedgerlineClockSkew} alerts on it.
 */
@Readiness
@ApplicationScoped
public class ClockReadinessCheck implements HealthCheck {

    private final ClockWatch clocks;

    public ClockReadinessCheck(ClockWatch clocks) {
        this.clocks = clocks;
    }

    @Override
    public HealthCheckResponse call() {
        String held = clocks.holdReason();
        var response = HealthCheckResponse.named("clocks").up();
        return held == null ? response.withData("clocks", "ok").build()
                : response.withData("clocks", "sends held").withData("reason", held).build();
    }
}
