package dev.ledgerline.transfers.provider;

import dev.ledgerline.transfers.config.StartupOrder;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.eclipse.microprofile.faulttolerance.Bulkhead;
import org.eclipse.microprofile.faulttolerance.CircuitBreaker;
import org.eclipse.microprofile.faulttolerance.Timeout;
import org.jboss.logging.Logger;

import java.time.Duration;

/**
 * Does at start-up, on the start-up thread, what the first send would otherwise do on an event-loop thread:
 * create {@link ProviderClient} and the HTTP client under it ({@link ProviderHttp}: its settings, TLS, the Vert.x client), and load
 * SmallRye Fault Tolerance's classes for a guarded {@code Uni} method. Without it the first send of each
 * instance spent up to seconds in class loading on the event loop, stalling every request that loop serves.
 *
 * <p>It never calls the provider: {@link #guarded()} is a local no-op with the same annotations as
 * {@link ProviderClient#send}, so what stays for the first real send is building its own guard from classes
 * already loaded. It runs before the beans and the scheduler ({@link StartupOrder#CLIENTS}), whose first sweep may send.
 */
@ApplicationScoped
public class ProviderWarmUp {

    private static final Logger LOG = Logger.getLogger(ProviderWarmUp.class);

    void warm(@Observes @Priority(StartupOrder.CLIENTS) StartupEvent start, ProviderClient client, ProviderHttp http) {
        // both are singletons: injected here, they are created now
        try {
            // the start-up thread, never an event loop; the service is not serving yet
            guarded().await().atMost(Duration.ofSeconds(30)); // blocking-ok
        } catch (RuntimeException e) {
            LOG.warnf("step=warm-up fault tolerance did not warm up at start-up, the first send will: %s", e.toString());
        }
    }

    /**
     * Goes through the fault-tolerance interceptor as {@link ProviderClient#send} does, and does nothing; its guards
     * read the same {@code ledgerline.provider.*} values (application.properties).
     */
    @Timeout
    @CircuitBreaker
    @Bulkhead
    Uni<Void> guarded() {
        return Uni.createFrom().voidItem();
    }
}
