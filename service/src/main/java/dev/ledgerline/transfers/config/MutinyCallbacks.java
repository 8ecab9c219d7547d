package dev.ledgerline.transfers.config;

import io.quarkus.runtime.StartupEvent;
import io.smallrye.context.SmallRyeThreadContext;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

/**
 * Takes the context-propagation decorator off Mutiny's callbacks when it has nothing to propagate. The service
 * propagates no thread context into Mutiny callbacks ({@code application.properties}: no CDI contexts, the JTA
 * transaction left unchanged), yet Mutiny still hands every callback of every operator to the decorator, which looks
 * up the current thread context each time only to hand the callback back: a few per cent of a replay's CPU. With an
 * empty default context the decorator is removed; a configuration that propagates a context again keeps it.
 */
@Singleton
public class MutinyCallbacks {

    private static final Logger LOG = Logger.getLogger(MutinyCallbacks.class);

    void onStart(@Observes StartupEvent start) {
        if (SmallRyeThreadContext.getCurrentThreadContextOrDefaultContexts().isEmpty()) {
            // Mutiny's only interceptor here is that decorator (mutiny-smallrye-context-propagation's service file)
            Infrastructure.clearInterceptors();
            LOG.debug("step=startup Mutiny callbacks are not decorated: no thread context to propagate");
        } else {
            LOG.info("step=startup a thread context is propagated into Mutiny callbacks: its decorator stays");
        }
    }
}
