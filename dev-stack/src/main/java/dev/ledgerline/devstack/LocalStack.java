package dev.ledgerline.devstack;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The self-contained local stack (README "Two commands"): a real PostgreSQL and a real Redis started from
 * Maven artifacts, for {@code quarkus:dev} and for the tests. The same code serves both, so what the tests
 * exercise is what a developer runs.
 */
public final class LocalStack implements AutoCloseable {

    private final LocalPostgres postgres;
    private final LocalRedis redis;

    private LocalStack(LocalPostgres postgres, LocalRedis redis) {
        this.postgres = postgres;
        this.redis = redis;
    }

    public static LocalStack start() {
        try {
            LocalRedis redis = LocalRedis.start();
            LocalPostgres postgres = LocalPostgres.start();
            return new LocalStack(postgres, redis);
        } catch (IOException e) {
            throw new UncheckedIOException("Could not start the local PostgreSQL/Redis servers", e);
        }
    }

    public LocalPostgres postgres() {
        return postgres;
    }

    public LocalRedis redis() {
        return redis;
    }

    /** The ordinary Quarkus properties that point the service at this stack. */
    public Map<String, String> quarkusProperties() {
        Map<String, String> props = new LinkedHashMap<>();
        props.put("quarkus.datasource.reactive.url", postgres.reactiveUrl());
        props.put("quarkus.datasource.jdbc.url", postgres.jdbcUrl());
        props.put("quarkus.datasource.username", LocalPostgres.USER);
        props.put("quarkus.datasource.password", "");
        props.put("quarkus.redis.hosts", redis.uri());
        return props;
    }

    /** Stops both servers and deletes PostgreSQL's data directory; Redis keeps nothing on disk. */
    @Override
    public void close() {
        try {
            redis.close();
        } finally {
            try {
                postgres.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
