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

import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Quarkus's Vert.x meters, less the ones that nothing reads and that cost every command, every socket read, or a
 * warning at every start.
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
 * ({@code http_server_requests_seconds}), its connection and active-request counts are the binder's, unchanged; a
 * successful answer's timer is found in a map ({@link KnownRequestTimers}) instead of looked up by its tags again.
 *
 * <p>Nor the gauges of Quarkus's connection limit ({@code vertx_http_connections_current}, {@code _max}): the limit
 * ({@code quarkus.http.limits.max-connections}) gets a tracker from the binder for each HTTP server that applies it,
 * and each tracker registers both gauges under one name, so Micrometer warned "This Gauge has been already registered"
 * at every start and kept the first registration's. {@link #noConnectionLimitGauges} denies them; open connections
 * are counted by {@code http_server_connections_seconds_active}, and the ones the limit refused by
 * {@code vertx_http_connections_rejected_total}, both kept.
 *
 * <p>Nor meters of Vert.x's worker pools ({@code worker_pool_*}, eight per pool). Vert.x creates its worker pools, and
 * with them their meters, before Quarkus configures the registries' filters, so Micrometer logged "A MeterFilter is
 * being configured after a Meter has been registered" once per filter at every start (five times), for meters no
 * filter concerns and nothing reads: the service runs on its event loops, and its one blocking call is a webhook's DNS
 * look-up. Without them a start logs no such warning ({@code PackagedJarIT}).
 *
 * <p>Nor client meters of the PostgreSQL connections ({@code postgresql_processing_seconds}, {@code postgresql_current}
 * and the like: a timer and counters per statement). The Vert.x SQL client asks for them per connection, all under
 * one name, so Micrometer warned "This Gauge has been already registered" at every start and kept the first
 * registration's gauges, which followed one connection of the pool's; the connection that listens for transfer
 * changes, which has no metrics name, gave them a name with no prefix ({@code m__processing_seconds}). The pool's meters
 * ({@code sql_pool_*}: the wait for a connection, its use, idle and active connections) are the binder's, unchanged.
 *
 * <p>Vert.x takes "no metrics" for a client or a pool as a {@code null} from the SPI, which is what this answers for the
 * {@code redis} and {@code worker} types and for the {@code sql} client; every other meter (the HTTP server's, the
 * PostgreSQL pool's) is the Quarkus binder's. Quarkus applies this after its own options, so the factory wrapped is
 * the Micrometer binder's.
 */
@Singleton
public class VertxMeters implements VertxOptionsCustomizer {

    /** The type the Vert.x Redis client names its pool and its client metrics by. */
    static final String REDIS = "redis";

    /** The type of the Vert.x SQL client's connection metrics (its pool's type is {@code sql} too; they are kept). */
    static final String SQL = "sql";

    /** The type of Vert.x's worker pools' metrics ({@code vert.x-worker-thread}, {@code vert.x-internal-blocking}). */
    static final String WORKER = "worker";

    /** The prefix of the HTTP server's byte summaries' names, before the registry's naming convention. */
    static final String SOCKET_BYTES = "http.server.bytes.";

    /** The gauges of the connection limit's tracker, which every HTTP server with the limit registers again. */
    static final Set<String> CONNECTION_LIMIT_GAUGES = Set.of("vertx.http.connections.current", "vertx.http.connections.max");

    /** Every HTTP server's meters, as {@link KnownRequestTimers} wraps them (tests read how many timers each knows). */
    private final List<KnownRequestTimers> servers = new CopyOnWriteArrayList<>();

    /** Denies the HTTP server's byte summaries on every registry, the binder's composite first. */
    @Produces
    @Singleton
    MeterFilter noSocketByteSummaries() {
        return MeterFilter.denyNameStartsWith(SOCKET_BYTES);
    }

    /** Denies {@link #CONNECTION_LIMIT_GAUGES} on every registry. */
    @Produces
    @Singleton
    MeterFilter noConnectionLimitGauges() {
        return MeterFilter.deny(id -> CONNECTION_LIMIT_GAUGES.contains(id.getName()));
    }

    /** The HTTP servers' meters created so far. */
    List<KnownRequestTimers> servers() {
        return List.copyOf(servers);
    }

    @Override
    public void accept(VertxOptions options) {
        MetricsOptions metrics = options.getMetricsOptions();
        if (metrics == null || !metrics.isEnabled() || metrics.getFactory() == null) {
            return;
        }
        VertxMetricsFactory binder = metrics.getFactory();
        options.setMetricsOptions(new MetricsOptions().setEnabled(true)
                .setFactory(vertxOptions -> new Trimmed(binder.metrics(vertxOptions), servers)));
    }

    /** The binder's metrics, but for the Redis client's, the PostgreSQL connections' and the worker pools'. */
    static final class Trimmed implements VertxMetrics, ExtendedQuarkusVertxHttpMetrics {

        private final VertxMetrics binder;
        private final List<KnownRequestTimers> servers;

        Trimmed(VertxMetrics binder, List<KnownRequestTimers> servers) {
            this.binder = binder;
            this.servers = servers;
        }

        @Override
        public ClientMetrics<?, ?, ?, ?> createClientMetrics(SocketAddress remote, String type, String namespace) {
            return REDIS.equals(type) || SQL.equals(type) ? null : binder.createClientMetrics(remote, type, namespace);
        }

        @Override
        public PoolMetrics<?> createPoolMetrics(String poolType, String poolName, int maxPoolSize) {
            return REDIS.equals(poolType) || WORKER.equals(poolType) ? null
                    : binder.createPoolMetrics(poolType, poolName, maxPoolSize);
        }

        @Override
        public EventBusMetrics<?> createEventBusMetrics() {
            return binder.createEventBusMetrics();
        }

        @Override
        public HttpServerMetrics<?, ?, ?> createHttpServerMetrics(HttpServerOptions options, SocketAddress localAddress) {
            HttpServerMetrics<?, ?, ?> server = binder.createHttpServerMetrics(options, localAddress);
            if (server == null) {
                return null;
            }
            KnownRequestTimers known = new KnownRequestTimers(server);
            servers.add(known);
            return known;
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
