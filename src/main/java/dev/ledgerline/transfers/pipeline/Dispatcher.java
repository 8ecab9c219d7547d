package dev.ledgerline.transfers.pipeline;

import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.transfers.transfer.TransferRepository.Seen;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Starts processing right after a transfer commits, with a bounded number in flight per instance.
 * Beyond the bound nothing is queued in memory: the row is already committed as {@code pending}, and
 * the sweeper picks it up. So a burst can neither exhaust memory nor connections, nor lose a transfer.
 */
@ApplicationScoped
public class Dispatcher {

    private static final Logger LOG = Logger.getLogger(Dispatcher.class);

    private final TransferProcessor processor;
    private final int maxInFlight;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final Counter started;
    private final Counter deferred;

    public Dispatcher(TransferProcessor processor, LedgerlineConfig config, MeterRegistry metrics) {
        this.processor = processor;
        this.maxInFlight = config.pipeline().maxInFlight();
        metrics.gauge("ledgerline.pipeline.in_flight", inFlight);
        this.started = metrics.counter("ledgerline.dispatch", "result", "started");
        this.deferred = metrics.counter("ledgerline.dispatch", "result", "deferred");
    }

    /**
     * Fire and forget, for a transfer this instance has just committed ({@link TransferProcessor#processJustAccepted}):
     * {@code false} when the instance is at its bound and the sweeper will take it.
     */
    public boolean dispatchAccepted(Seen seen, String why) {
        if (!tryEnter()) {
            deferred.increment();
            return false;
        }
        started.increment();
        processor.processJustAccepted(seen, why)
                .onFailure().invoke(e -> LOG.warnf("transferId=%s step=dispatch failed, the sweeper retries: %s", seen.id(), e.toString()))
                .eventually(inFlight::decrementAndGet)
                .subscribe().with(outcome -> { }, failure -> { });
        return true;
    }

    /** Runs one pass within the in-flight bound; the caller must have entered with {@link #tryEnter()}. */
    Uni<TransferProcessor.Outcome> run(Seen seen, String why) {
        return processor.process(seen, why)
                .onFailure().invoke(e -> LOG.warnf("transferId=%s step=dispatch failed, the sweeper retries: %s", seen.id(), e.toString()))
                .eventually(inFlight::decrementAndGet);
    }

    boolean tryEnter() {
        if (inFlight.incrementAndGet() > maxInFlight) {
            inFlight.decrementAndGet();
            return false;
        }
        return true;
    }
}
