package dev.ledgerline.transfers.support;

import dev.ledgerline.devstack.LocalStack;
import dev.ledgerline.transfers.provider.ProviderGuards;
import dev.ledgerline.transfers.redis.RedisCommands;
import io.quarkus.arc.Arc;

/** Where tests find the servers {@link LocalStackResource} started. */
public final class TestStack {

    private static volatile LocalStack current;

    private TestStack() {
    }

    static void publish(LocalStack stack) {
        current = stack;
    }

    static void unpublish() {
        current = null;
    }

    /**
     * Gives back what a fault test took away: a killed Redis restarts (empty), a stopped PostgreSQL starts
     * again, and every breaker is closed, so the next test starts from a known state.
     */
    public static void heal() throws java.io.IOException {
        LocalStack stack = current();
        if (!stack.redis().isRunning()) {
            stack.redis().restart();
        }
        stack.postgres().startAgain();
        closeBreakers();
    }

    /** Closes the provider's breakers and the shared Redis breaker of the running service. */
    public static void closeBreakers() {
        Arc.container().instance(ProviderGuards.class).get().resetBreakers();
        Arc.container().instance(RedisCommands.class).get().resetBreaker();
    }

    public static LocalStack current() {
        LocalStack stack = current;
        if (stack == null) {
            throw new IllegalStateException("No local stack is running; annotate the test with @QuarkusTest");
        }
        return stack;
    }
}
