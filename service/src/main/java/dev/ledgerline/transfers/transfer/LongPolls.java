package dev.ledgerline.transfers.transfer;

import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Duration;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * Long polling ({@code Prefer: wait}): holds a request until its transfer satisfies a condition or the wait
 * runs out, woken by {@link TransferChanges} (any instance's change) rather than by polling the database, and
 * within the principal's share of held polls ({@link HeldPolls}). Answers with the latest row.
 */
@ApplicationScoped
public class LongPolls {

    private enum Wake { CHANGED, DEADLINE, NO_ROOM }

    private final TransferChanges changes;
    private final TransferRepository transfers;
    private final HeldPolls held;

    public LongPolls(TransferChanges changes, TransferRepository transfers, HeldPolls held) {
        this.changes = changes;
        this.transfers = transfers;
        this.held = held;
    }

    /**
     * The latest row once {@code done} holds or {@code wait} has passed; empty, without waiting, when the
     * principal already holds its share of polls. The slot is given back when the returned wait ends.
     */
    public Optional<Uni<Transfer>> hold(String principal, Transfer t, Predicate<Transfer> done, Duration wait) {
        if (!held.tryHold(principal)) {
            return Optional.empty();
        }
        long deadline = System.nanoTime() + wait.toNanos();
        return Optional.of(waitUntil(t, done, deadline).onTermination().invoke(() -> held.release(principal)));
    }

    private Uni<Transfer> waitUntil(Transfer t, Predicate<Transfer> done, long deadline) {
        long remaining = deadline - System.nanoTime();
        if (done.test(t) || remaining <= 0) {
            return Uni.createFrom().item(t);
        }
        // subscribe to announcements first, then look once more: a change between the first read and
        // the subscription is seen by the second read instead of being missed
        Uni<Wake> announced = changes.next(t.id(), t.version()).map(v -> v == null ? Wake.NO_ROOM : Wake.CHANGED);
        Uni<Wake> movedMeanwhile = transfers.findById(t.id())
                .flatMap(x -> x != null && x.version() != t.version()
                        ? Uni.createFrom().item(Wake.CHANGED)
                        : Uni.createFrom().<Wake>nothing());
        return Uni.join().first(announced, movedMeanwhile).withItem()
                .ifNoItem().after(Duration.ofNanos(remaining)).recoverWithItem(Wake.DEADLINE)
                .flatMap(wake -> transfers.findById(t.id()).flatMap(latest -> {
                    if (latest == null) {
                        return Uni.createFrom().item(t);
                    }
                    return wake == Wake.CHANGED ? waitUntil(latest, done, deadline) : Uni.createFrom().item(latest);
                }));
    }
}
