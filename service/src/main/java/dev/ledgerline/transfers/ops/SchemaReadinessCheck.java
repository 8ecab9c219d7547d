package dev.ledgerline.transfers.ops;

import io.smallrye.health.api.AsyncHealthCheck;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

import java.time.Duration;

/**
 * The Flyway schema in readiness: DOWN if PostgreSQL cannot be asked or a migration failed. The version shown is the
 * last one applied (by install order: versions are text, and {@code max} would put 7 after 10).
 */
@Readiness
@ApplicationScoped
public class SchemaReadinessCheck implements AsyncHealthCheck {

    static final String SCHEMA = """
            SELECT (SELECT version FROM flyway_schema_history WHERE success AND version IS NOT NULL
                     ORDER BY installed_rank DESC LIMIT 1) AS version,
                   (SELECT count(*) FROM flyway_schema_history WHERE NOT success) AS failed""";

    private final Pool pool;

    public SchemaReadinessCheck(Pool pool) {
        this.pool = pool;
    }

    @Override
    public Uni<HealthCheckResponse> call() {
        return pool.query(SCHEMA).execute()
                .ifNoItem().after(Duration.ofSeconds(2)).fail()
                .map(rows -> {
                    Row row = rows.iterator().next();
                    boolean ok = row.getLong("failed") == 0;
                    return HealthCheckResponse.named("flyway").status(ok)
                            .withData("schemaVersion", String.valueOf(row.getString("version")))
                            .withData("failedMigrations", row.getLong("failed"))
                            .build();
                })
                .onFailure().recoverWithItem(e -> HealthCheckResponse.named("flyway").down()
                        .withData("error", "PostgreSQL unreachable: " + e.getClass().getSimpleName()).build());
    }
}
