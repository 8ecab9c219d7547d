package dev.ledgerline.transfers.config;

import jakarta.interceptor.Interceptor;

/**
 * The order of the service's own work at start-up, as {@code @Startup} and {@code StartupEvent} observer priorities
 * (lower runs first). Quarkus's scheduler starts its jobs at {@link Interceptor.Priority#PLATFORM_BEFORE}, and the
 * first sweep, count or clock check may run a second later; every bean those jobs or the first requests use is
 * therefore built before it, on the start-up thread, rather than lazily on an event loop at first use (where
 * building meters, pools and clients stalls every request that loop serves).
 * <ol>
 *   <li>{@link #ALERT_SERIES}: {@code AlertMetrics} registers the series the alert rules read, so they exist before
 *       anything counts;</li>
 *   <li>{@link #CLIENTS}: the warm-ups that build the PostgreSQL pool and the provider client, and the repositories
 *       over the pool. They come before the beans because some beans start their own Vert.x timers when they are built
 *       (the backlog count fires a second later): on a slow start, a timer that reached the pool or a repository while
 *       the start-up thread was still building it would hold its event loop on the bean's creation lock;</li>
 *   <li>{@link #BEFORE_SCHEDULER}: the beans the scheduler's jobs and the request path use;</li>
 *   <li>then the scheduler.</li>
 * </ol>
 */
public final class StartupOrder {

    /** {@code AlertMetrics}: first, so the alerted series are there before any other bean counts. */
    public static final int ALERT_SERIES = Interceptor.Priority.PLATFORM_BEFORE - 3;

    /** The PostgreSQL pool, the repositories over it and the provider client, built before any bean that starts a timer. */
    public static final int CLIENTS = Interceptor.Priority.PLATFORM_BEFORE - 2;

    /** Beans and warm-ups built before the scheduler starts. */
    public static final int BEFORE_SCHEDULER = Interceptor.Priority.PLATFORM_BEFORE - 1;

    private StartupOrder() {
    }
}
