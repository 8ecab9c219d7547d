package dev.ledgerline.transfers.transfer;

import dev.ledgerline.transfers.config.StartupOrder;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;

/**
 * Builds the reactive PostgreSQL pool and opens a few of its connections during start-up, on the start-up
 * thread. Left to the first request, the pool is created lazily on an event-loop thread, and its first
 * connections load the client's classes (pool, SCRAM, the extended-query codec) there: hundreds of
 * milliseconds of class loading in the middle of request handling. Connections opened later only wait for I/O.
 * It runs before the beans that start timers and before the scheduler ({@link StartupOrder#CLIENTS}): a backlog
 * count or a sweep that found the pool still being built would wait for it on an event loop.
 */
@ApplicationScoped
class PoolWarmUp {

    private static final Logger LOG = Logger.getLogger(PoolWarmUp.class);
    /** Enough concurrent statements that more than one connection is opened, far below the pool's size. */
    static final int CONNECTIONS = 4;

    void warm(@Observes @Priority(StartupOrder.CLIENTS) StartupEvent start, Pool pool) {
        List<Uni<Integer>> statements = IntStream.range(0, CONNECTIONS)
                .mapToObj(i -> pool.preparedQuery("SELECT $1::int").execute(Tuple.of(i)).map(rows -> rows.size()))
                .toList();
        try {
            // the start-up thread, never an event loop; the service is not serving yet
            Uni.join().all(statements).andCollectFailures().await().atMost(Duration.ofSeconds(30)); // blocking-ok
        } catch (RuntimeException e) {
            LOG.warnf("step=warm-up could not open PostgreSQL connections at start-up, the first requests will: %s", e.toString());
        }
    }
}
