package dev.ledgerline.transfers.metrics;

import io.micrometer.core.instrument.config.MeterFilter;
import io.quarkus.vertx.VertxOptionsCustomizer;
import io.quarkus.vertx.http.runtime.ExtendedQuarkusVertxHttpMetrics;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.datagram.DatagramSocketOptions;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.metrics.MetricsOptions;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.SocketAddress;
import io.vertx.core.spi.VertxMetricsFactory;
import io.vertx.core.spi.metrics.ClientMetrics;
import io.vertx.core.spi.metrics.DatagramSocketMetrics;
import io.vertx.core.spi.metrics.EventBusMetrics;
import io.vertx.core.spi.metrics.HttpClientMetrics;
import io.vertx.core.spi.metrics.HttpServerMetrics;
import io.vertx.core.spi.metrics.PoolMetrics;
import io.vertx.core.spi.metrics.TCPMetrics;
import io.vertx.core.spi.metrics.VertxMetrics;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/**
 * Quarkus's Vert.x meters, less the ones that cost every command or every socket read and that nothing reads.
 *
 * <p>No meters of the Redis client: no pool meters ({@code redis_pool_*}: two timers and gauges per connection
 * borrowed), no client meters ({@code redis_processing_seconds} and the like: two timers per command) and no socket
 * meters ({@code redis_bytes_written}: a summary per write). A replay borrows one connection and sends one command, and
 * the pool's and the client's timers were 3.5 % of its CPU (bench/CPU-AB.md); nothing read them, and
 * {@code quarkus.micrometer.binder.redis.enabled=false} does not reach them: they come from the Vert.x metrics SPI, which
 * has no switch per client. {@code ledgerline_redis_commands_total} counts every command by result, and
 * {@code ledgerline_redis_breaker_open} says when Redis is skipped.
 *
 * <p>Nor byte summaries of the HTTP server's sockets ({@code http_server_bytes_read}, {@code http_server_bytes_written}):
 * a summary update for every read and every write of every connection, 1.5 % of a replay's CPU, read by no alert and
 * no dashboard, and with no setting of their own. {@link #noSocketByteSummaries} denies them, so the binder holds a
 * meter that records nothing and the scrape shows none. The HTTP server's request timer
 * ({@code http_server_requests_seconds}), its connection and active-request counts are the binder's, unchanged.
 *
 * <p>Vert.x takes "no metrics" for a client or a pool as a {@code null} from the SPI, which is what this answers for the
 * {@code redis} type; every other meter (the HTTP server's, the PostgreSQL client's and its pool's) is the Quarkus
 * binder's. Quarkus applies this after its own options, so the factory wrapped is the Micrometer binder's.
 */
@Singleton
public class VertxMeters implements VertxOptionsCustomizer {

    /** The type the Vert.x Redis client names its pool and its client metrics by. */
    static final String REDIS = "redis";

    /** The prefix of the HTTP server's byte summaries' names, before the registry's naming convention. */
    static final String SOCKET_BYTES = "http.server.bytes.";

    /** Denies the HTTP server's byte summaries on every registry, the binder's composite first. */
    @Produces
    @Singleton
    MeterFilter noSocketByteSummaries() {
        return MeterFilter.denyNameStartsWith(SOCKET_BYTES);
    }

    @Override
    public void accept(VertxOptions options) {
        MetricsOptions metrics = options.getMetricsOptions();
        if (metrics == null || !metrics.isEnabled() || metrics.getFactory() == null) {
            return;
        }
        VertxMetricsFactory binder = metrics.getFactory();
        options.setMetricsOptions(new MetricsOptions().setEnabled(true)
                .setFactory(vertxOptions -> new Trimmed(binder.metrics(vertxOptions))));
    }

    /** The binder's metrics, but for the Redis client's. */
    static final class Trimmed implements VertxMetrics, ExtendedQuarkusVertxHttpMetrics {

        private final VertxMetrics binder;

        Trimmed(VertxMetrics binder) {
            this.binder = binder;
        }

        @Override
        public ClientMetrics<?, ?, ?, ?> createClientMetrics(SocketAddress remote, String type, String namespace) {
            return REDIS.equals(type) ? null : binder.createClientMetrics(remote, type, namespace);
        }

        @Override
        public PoolMetrics<?> createPoolMetrics(String poolType, String poolName, int maxPoolSize) {
            return REDIS.equals(poolType) ? null : binder.createPoolMetrics(poolType, poolName, maxPoolSize);
        }

        @Override
        public EventBusMetrics<?> createEventBusMetrics() {
            return binder.createEventBusMetrics();
        }

        @Override
        public HttpServerMetrics<?, ?, ?> createHttpServerMetrics(HttpServerOptions options, SocketAddress localAddress) {
            return binder.createHttpServerMetrics(options, localAddress);
        }

        @Override
        public HttpClientMetrics<?, ?, ?, ?> createHttpClientMetrics(HttpClientOptions options) {
            return binder.createHttpClientMetrics(options);
        }

        @Override
        public TCPMetrics<?> createNetServerMetrics(NetServerOptions options, SocketAddress localAddress) {
            return binder.createNetServerMetrics(options, localAddress);
        }

        /** The Redis client's sockets are named {@code redis|<client name>} ({@code redis_bytes_written} and the like). */
        @Override
        public TCPMetrics<?> createNetClientMetrics(NetClientOptions options) {
            String name = options.getMetricsName();
            return name != null && (name.equals(REDIS) || name.startsWith(REDIS + "|")) ? null
                    : binder.createNetClientMetrics(options);
        }

        @Override
        public DatagramSocketMetrics createDatagramSocketMetrics(DatagramSocketOptions options) {
            return binder.createDatagramSocketMetrics(options);
        }

        @Override
        public void vertxCreated(Vertx vertx) {
            binder.vertxCreated(vertx);
        }

        @Override
        public boolean isMetricsEnabled() {
            return binder.isMetricsEnabled();
        }

        @Override
        public void close() {
            binder.close();
        }

        /** The HTTP server's connection limit counts through the binder's tracker, as without this wrapper. */
        @Override
        public ConnectionTracker getHttpConnectionTracker() {
            return binder instanceof ExtendedQuarkusVertxHttpMetrics http ? http.getHttpConnectionTracker()
                    : NOOP_CONNECTION_TRACKER;
        }
    }
}
