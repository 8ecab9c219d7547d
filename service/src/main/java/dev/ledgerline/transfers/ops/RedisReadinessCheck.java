package dev.ledgerline.transfers.ops;

import dev.ledgerline.transfers.redis.RedisCommands;
import io.smallrye.health.api.AsyncHealthCheck;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * Redis in readiness: always UP, because without Redis the service is slower, never wrong (README "When things fail") —
 * taking instances out of the load balancer for it would turn a slowdown into an outage. The
 * {@code redis} detail says {@code up} or {@code degraded} for operators and alerts.
 */
@Readiness
@ApplicationScoped
public class RedisReadinessCheck implements AsyncHealthCheck {

    private final RedisCommands redis;

    public RedisReadinessCheck(RedisCommands redis) {
        this.redis = redis;
    }

    @Override
    public Uni<HealthCheckResponse> call() {
        return redis.execute("PING")
                .map(pong -> HealthCheckResponse.named("redis").up().withData("redis", "up").build())
                .onFailure().recoverWithItem(e -> HealthCheckResponse.named("redis").up()
                        .withData("redis", "degraded")
                        .withData("impact", "duplicate checks and claims go straight to PostgreSQL")
                        .build());
    }
}
