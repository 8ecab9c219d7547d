package dev.ledgerline.transfers.redis;

import dev.ledgerline.devstack.LocalRedis;
import dev.ledgerline.transfers.support.RedisStats;
import dev.ledgerline.transfers.support.TestStack;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.mutiny.redis.client.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The service's own commands are pipelined: what one event loop sends while Redis is busy reaches Redis together on
 * that loop's connection, so Redis reads them together instead of once per command.
 */
@QuarkusTest
class RedisPipelineTest {

    private static final int COMMANDS = 100;

    @Inject
    RedisCommands redis;

    @Inject
    Vertx vertx;

    @AfterEach
    void heal() throws Exception {
        TestStack.heal();
    }

    @Test
    void oneEventLoopsCommandsReachRedisTogether() throws Exception {
        Context loop = vertx.getOrCreateContext();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!onLoop(loop, () -> {
            redis.execute("PING").subscribe().with(ignored -> { }, ignored -> { }); // a loop's first command connects its pipe
            return redis.pipelinedHere();
        })) {
            assertTrue(System.nanoTime() < deadline, "the event loop holds no Redis pipe after 10 s");
            Thread.sleep(20);
        }

        LocalRedis server = TestStack.current().redis();
        long before = RedisStats.readsProcessed(server.port());
        List<CompletableFuture<Response>> answers;
        server.pause();
        try {
            answers = onLoop(loop, () -> {
                List<CompletableFuture<Response>> sent = new ArrayList<>();
                for (int i = 0; i < COMMANDS; i++) {
                    sent.add(redis.execute("INCR", "pipeline-test:n").subscribeAsCompletionStage());
                }
                return sent;
            });
            Thread.sleep(100); // well within the commands' 250 ms timeout
        } finally {
            server.resume();
        }
        for (CompletableFuture<Response> answer : answers) {
            assertTrue(answer.get(10, TimeUnit.SECONDS).toLong() > 0);
        }
        long reads = RedisStats.readsProcessed(server.port()) - before;
        // pooled, each command would be its connection's own read: at least COMMANDS
        assertTrue(reads < COMMANDS / 4, reads + " reads by Redis for " + COMMANDS + " commands of one event loop");
    }

    private static <T> T onLoop(Context loop, java.util.function.Supplier<T> call) throws Exception {
        CompletableFuture<T> result = new CompletableFuture<>();
        loop.runOnContext(ignored -> {
            try {
                result.complete(call.get());
            } catch (RuntimeException e) {
                result.completeExceptionally(e);
            }
        });
        return result.get(10, TimeUnit.SECONDS);
    }
}
