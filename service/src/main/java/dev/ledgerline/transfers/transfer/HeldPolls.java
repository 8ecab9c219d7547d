package dev.ledgerline.transfers.transfer;

import dev.ledgerline.transfers.config.LedgerlineConfig;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Counts the long polls ({@code Prefer: wait}) each principal holds on this instance and refuses one beyond
 * {@code ledgerline.long-poll.max-waiting-per-principal}: without it one token could take the whole
 * instance's budget of waiting requests ({@code max-waiting-requests}) and every other client's polls would
 * be answered at once instead of held. A principal's count disappears when its last poll ends.
 */
@ApplicationScoped
public class HeldPolls {

    private final ConcurrentHashMap<String, AtomicInteger> held = new ConcurrentHashMap<>();
    private final int perPrincipal;

    public HeldPolls(LedgerlineConfig config) {
        this.perPrincipal = config.longPoll().maxWaitingPerPrincipal();
    }

    /** Takes a slot for {@code principal}; {@code false} when it already holds its share. */
    public boolean tryHold(String principal) {
        boolean[] taken = {false};
        held.compute(principal, (p, count) -> {
            AtomicInteger c = count == null ? new AtomicInteger() : count;
            if (c.get() < perPrincipal) {
                c.incrementAndGet();
                taken[0] = true;
            }
            return c.get() == 0 ? null : c;
        });
        return taken[0];
    }

    /** Gives back a slot taken by {@link #tryHold(String)}. */
    public void release(String principal) {
        held.computeIfPresent(principal, (p, count) -> count.decrementAndGet() <= 0 ? null : count);
    }
}
