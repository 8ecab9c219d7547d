package dev.ledgerline.transfers.transfer;

import io.quarkus.reactive.pg.client.PgPoolCreator;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.spi.PgDriver;
import io.vertx.sqlclient.Pool;
import jakarta.inject.Singleton;
import org.eclipse.microprofile.config.inject.ConfigProperty;

import java.util.Optional;

/**
 * The reactive pool as Quarkus configures it ({@code quarkus.datasource.reactive.*}: the URL, the credentials, TLS,
 * the size, {@code cache-prepared-statements}), with one change Quarkus has no setting for: a connection also keeps
 * the prepared statements whose SQL is longer than the client's default limit of 2,048 characters.
 *
 * <p>Without it the fence ({@link TransferSql#FENCE}) and the insert that holds funds ({@link TransferSql#INSERT_HOLDING})
 * were prepared again for every execution: PostgreSQL parsed and planned them each time, and the prepare's own
 * {@code Sync} was a transaction of its own, about one commit per transfer more than the statements it ran
 * (bench/DBCOST.md). {@link #SQL_LIMIT} covers every statement the service sends; {@code PoolCreatorTest} fails
 * when one outgrows it.
 *
 * <p>Quarkus hands a creator the connect options but not a credentials provider
 * ({@code quarkus.datasource.credentials-provider}, e.g. rotating database passwords), so with one configured the
 * service refuses to start rather than connect without it.
 */
@Singleton
public class PoolCreator implements PgPoolCreator {

    /** The longest SQL text a connection keeps prepared, in characters. */
    public static final int SQL_LIMIT = 16_384;

    public PoolCreator(@ConfigProperty(name = "quarkus.datasource.credentials-provider") Optional<String> credentialsProvider) {
        if (credentialsProvider.filter(name -> !name.isBlank()).isPresent()) {
            throw new IllegalStateException("quarkus.datasource.credentials-provider is not supported: the service builds its "
                    + "PostgreSQL pool itself (PoolCreator) and Quarkus does not pass the provider on; set the credentials "
                    + "(QUARKUS_DATASOURCE_USERNAME, QUARKUS_DATASOURCE_PASSWORD) instead");
        }
    }

    @Override
    public Pool create(Input input) {
        for (PgConnectOptions options : input.pgConnectOptionsList()) {
            options.setPreparedStatementCacheSqlLimit(SQL_LIMIT);
        }
        // what Quarkus does without a creator, with the same options: one pool over the configured servers
        return PgDriver.INSTANCE.createPool(input.vertx(), input.pgConnectOptionsList(), input.poolOptions());
    }
}
