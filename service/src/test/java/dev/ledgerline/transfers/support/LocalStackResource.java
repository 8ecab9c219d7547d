package dev.ledgerline.transfers.support;

import dev.ledgerline.devstack.LocalPostgres;
import dev.ledgerline.devstack.LocalRedis;
import dev.ledgerline.devstack.LocalStack;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

import java.util.Map;

/**
 * Gives the tests their own real PostgreSQL and Redis (the same local stack as {@code quarkus:dev}).
 * The servers are published through {@link TestStack} so fault tests can pause, kill and restart them.
 */
public class LocalStackResource implements QuarkusTestResourceLifecycleManager {

    private LocalStack stack;

    @Override
    public Map<String, String> start() {
        stack = LocalStack.start();
        TestStack.publish(stack);
        return stack.quarkusProperties();
    }

    @Override
    public void stop() {
        TestStack.unpublish();
        if (stack != null) {
            stack.close();
        }
    }

    static LocalPostgres postgres(LocalStack stack) {
        return stack.postgres();
    }

    static LocalRedis redis(LocalStack stack) {
        return stack.redis();
    }
}
