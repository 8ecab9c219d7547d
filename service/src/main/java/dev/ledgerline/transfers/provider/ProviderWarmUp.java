package dev.ledgerline.transfers.provider;

import dev.ledgerline.transfers.config.StartupOrder;
import io.quarkus.runtime.StartupEvent;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

/**
 * Does at start-up, on the start-up thread, what the first send would otherwise do on an event-loop thread:
 * create {@link ProviderClient}, its guards ({@link ProviderGuards}) and the HTTP client under it ({@link ProviderHttp}:
 * its settings, TLS, the Vert.x client). Without it the first send of each instance spent up to seconds in class
 * loading on the event loop, stalling every request that loop serves. It never calls the provider, and runs before
 * the beans and the scheduler ({@link StartupOrder#CLIENTS}), whose first sweep may send.
 */
@ApplicationScoped
public class ProviderWarmUp {

    void warm(@Observes @Priority(StartupOrder.CLIENTS) StartupEvent start, ProviderClient client, ProviderHttp http) {
        // both are singletons: injected here, they are created now
    }
}
