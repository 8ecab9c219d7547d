package dev.ledgerline.transfers.support;

import dev.ledgerline.transfers.local.LocalStack;

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

    /** Gives back what a fault test took away: a killed Redis restarts (empty), a stopped PostgreSQL starts again. */
    public static void heal() throws java.io.IOException {
        LocalStack stack = current();
        if (!stack.redis().isRunning()) {
            stack.redis().restart();
        }
        stack.postgres().startAgain();
    }

    public static LocalStack current() {
        LocalStack stack = current;
        if (stack == null) {
            throw new IllegalStateException("No local stack is running; annotate the test with @QuarkusTest");
        }
        return stack;
    }
}
