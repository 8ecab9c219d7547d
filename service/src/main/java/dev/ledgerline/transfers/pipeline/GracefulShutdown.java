package dev.ledgerline.transfers.pipeline;

import dev.ledgerline.transfers.config.LedgerlineConfig;
import io.quarkus.runtime.ShutdownDelayInitiatedEvent;
import io.quarkus.runtime.ShutdownEvent;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.jboss.logging.Logger;

import java.time.Duration;

/**
 * The pipeline's part of a graceful shutdown (docs/operating.md "Graceful shutdown"). Quarkus first turns readiness DOWN
 * and keeps serving for {@code quarkus.shutdown.delay}, then answers the requests already inside for up to
 * {@code quarkus.shutdown.timeout} while refusing new ones with 503; after that, this:
 * <ol>
 *   <li>when the delay starts: the sweeper stops taking new backlog (other instances take it), while
 *       transfers accepted here during the delay are still dispatched at once;</li>
 *   <li>at shutdown: nothing new starts, and the passes in flight get up to
 *       {@code ledgerline.pipeline.shutdown-grace} to finish;</li>
 *   <li>a pass still running then is cut off when the process exits — exactly as a crash would leave it:
 *       its row stays {@code processing} until its lease expires and another instance reconciles it — but its
 *       Redis lock is released first (compare-and-delete), so nobody waits for the lock's TTL.</li>
 * </ol>
 * The process therefore exits within delay + timeout + shutdown-grace + one second.
 */
@ApplicationScoped
public class GracefulShutdown {

    private static final Logger LOG = Logger.getLogger(GracefulShutdown.class);
    private static final Duration LOCK_RELEASE_BOUND = Duration.ofSeconds(1);

    private final Dispatcher dispatcher;
    private final RedisLock locks;
    private final Duration grace;

    public GracefulShutdown(Dispatcher dispatcher, RedisLock locks, LedgerlineConfig config) {
        this.dispatcher = dispatcher;
        this.locks = locks;
        this.grace = config.pipeline().shutdownGrace();
    }

    void delayStarted(@Observes ShutdownDelayInitiatedEvent event) {
        LOG.infof("step=shutdown readiness is DOWN; the sweeper takes no new backlog, %d pass(es) in flight", dispatcher.inFlight());
        dispatcher.stopSweeping();
    }

    /** Runs before the scheduler, the Redis client and the database pool are closed (observers run first). */
    void stopping(@Observes @Priority(1) ShutdownEvent event) {
        int inFlight = dispatcher.inFlight();
        boolean idle;
        try {
            idle = dispatcher.stopAndAwaitIdle(grace);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            idle = false;
        }
        int cut = dispatcher.inFlight();
        int released = 0;
        try {
            released = locks.releaseAll(LOCK_RELEASE_BOUND);
        } catch (RuntimeException e) {
            LOG.warnf("step=shutdown could not release every lock (they expire by themselves): %s", e.toString());
        }
        LOG.infof("step=shutdown pipeline stopped: %d pass(es) were in flight, %s; %d Redis lock(s) released",
                inFlight, idle ? "all finished" : cut + " cut off after " + grace + " (left as a crash leaves them)", released);
    }
}
