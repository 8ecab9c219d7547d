package dev.ledgerline.transfers.redis;

import dev.ledgerline.devstack.LocalRedis;
import dev.ledgerline.transfers.support.RedisStats;
import io.netty.channel.Channel;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.impl.VertxInternal;
import io.vertx.core.spi.tracing.SpanKind;
import io.vertx.core.spi.tracing.TagExtractor;
import io.vertx.core.spi.tracing.VertxTracer;
import io.vertx.core.tracing.TracingOptions;
import io.vertx.core.tracing.TracingPolicy;
import io.vertx.core.net.impl.NetSocketInternal;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Redis;
import io.vertx.redis.client.RedisConnection;
import io.vertx.redis.client.RedisOptions;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import io.vertx.redis.client.impl.PooledRedisConnection;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.params.ClientKillParams;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link Pipes} against a real Redis that the test freezes and whose connections it kills: an event loop's commands
 * share one connection and reach Redis together, every command gets its own answer, and a pipe that dies or goes
 * unanswered is replaced without losing a command sent after it.
 */
class PipesTest {

    private static final int COMMANDS = 200;
    private static LocalRedis server;
    private static Vertx vertx;
    private static Context loop;
    private static Redis pooled;
    private Pipes pipes;

    @BeforeAll
    static void start() throws Exception {
        server = LocalRedis.start();
        vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1));
        loop = vertx.getOrCreateContext();
        pooled = Redis.createClient(vertx, options());
    }

    @AfterAll
    static void stop() throws Exception {
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        server.close();
    }

    @BeforeEach
    void pipes() {
        pipes = new Pipes(pooled, vertx, options());
    }

    @AfterEach
    void closePipes() {
        pipes.close();
    }

    private static RedisOptions options() {
        return new RedisOptions().setConnectionString(server.uri()).setMaxPoolSize(COMMANDS).setMaxPoolWaiting(COMMANDS);
    }

    @Test
    void oneLoopsCommandsReachRedisTogetherOnOneConnection() throws Exception {
        awaitHeld(pipes);
        long readsPiped = readsFor(pipes);
        long readsPooled = readsFor(new Pipes(pooled, vertx, null)); // pipes off: a pooled connection per command
        // frozen while they were sent, Redis finds the loop's commands waiting together on its one connection
        assertTrue(readsPiped < COMMANDS / 4, "pipelined: " + readsPiped + " reads for " + COMMANDS + " commands");
        assertTrue(readsPooled >= COMMANDS, "pooled: " + readsPooled + " reads for " + COMMANDS + " commands");
    }

    /**
     * Commands that one event-loop task sends on its pipe, while no answer from Redis is being read, leave in one write
     * at the end of the task: Redis, awake, reads them together. Without that, each command is written the moment it
     * is sent, and Redis, reading as fast as they come, reads them one or a few at a time.
     */
    @Test
    void oneTasksCommandsLeaveTogetherWhileRedisIsAwake() throws Exception {
        awaitHeld(pipes);
        long before = RedisStats.readsProcessed(server.port());
        List<CompletableFuture<Response>> answers = onLoop(() -> {
            List<CompletableFuture<Response>> sent = new ArrayList<>();
            for (int i = 0; i < COMMANDS; i++) {
                sent.add(pipes.send(Request.cmd(Command.INCR).arg("pipes:awake")).toCompletionStage().toCompletableFuture());
                Thread.onSpinWait();
            }
            return Future.succeededFuture(sent);
        });
        Set<Long> counts = new HashSet<>();
        for (CompletableFuture<Response> answer : answers) {
            counts.add(answer.get(10, TimeUnit.SECONDS).toLong());
        }
        assertEquals(COMMANDS, counts.size(), "every command took its own answer");
        long reads = RedisStats.readsProcessed(server.port()) - before - 1; // less INFO's own read
        assertTrue(reads <= 2, reads + " reads for " + COMMANDS + " commands sent in one task");
    }

    /**
     * Commands the coalescer still holds when the pipe's socket closes, as when Redis goes away in the same instant,
     * fail once, with the connection's end; Vert.x's connection, which took a failed write as its end and then ended
     * again at the close (an error under assertions, its pool's reference given back twice without), is ended once,
     * and the loop gets a new pipe.
     */
    @Test
    void commandsHeldWhenTheSocketClosesFailWithItsEndAndThePipeIsReplaced() throws Exception {
        long first = awaitHeld(pipes);
        List<Throwable> unhandled = new CopyOnWriteArrayList<>();
        vertx.exceptionHandler(unhandled::add);
        try {
            List<CompletableFuture<Response>> held = onLoop(() -> {
                List<CompletableFuture<Response>> sent = new ArrayList<>();
                for (int i = 0; i < 10; i++) {
                    sent.add(pipes.send(Request.cmd(Command.INCR).arg("pipes:held")).toCompletionStage().toCompletableFuture());
                }
                // closed as Netty closes a socket the peer reset, under the pipeline: nothing flushes first
                Channel channel = socketOf(pipes.connectionHere()).channelHandlerContext().channel();
                channel.unsafe().close(channel.voidPromise());
                return Future.succeededFuture(sent);
            });
            for (CompletableFuture<Response> command : held) {
                assertTrue(failedWithin(command, 5), "a command held when its socket closed failed");
            }
            assertNotEquals(first, awaitHeld(pipes));
            assertEquals("PONG", onLoop(() -> pipes.send(Request.cmd(Command.PING))).toString());
            assertEquals(List.of(), unhandled);
        } finally {
            vertx.exceptionHandler(null);
        }
    }

    /**
     * A pipe's commands skip the pool connection's report of each command only when nothing reads that report: with a
     * tracer, each command on the pipe still reaches it.
     */
    @Test
    void aTracerStillSeesEveryCommandOnThePipe() throws Exception {
        List<String> traced = new CopyOnWriteArrayList<>();
        VertxTracer<Object, Object> tracer = new VertxTracer<>() {
            @Override
            public <R> Object sendRequest(Context context, SpanKind kind, TracingPolicy policy, R request,
                                          String operation, BiConsumer<String, String> headers, TagExtractor<R> tags) {
                traced.add(operation);
                return null;
            }
        };
        Vertx tracing = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1)
                .setTracingOptions(new TracingOptions().setFactory(options -> tracer)));
        Pipes own = new Pipes(Redis.createClient(tracing, options()), tracing, options());
        try {
            Context context = tracing.getOrCreateContext();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!on(context, () -> {
                own.send(Request.cmd(Command.PING));
                return Future.succeededFuture(own.heldHere());
            })) {
                assertTrue(System.nanoTime() < deadline, "no pipe within 10 s");
                Thread.sleep(20);
            }
            traced.clear();
            for (int i = 0; i < 5; i++) {
                assertEquals("PONG", on(context, () -> own.send(Request.cmd(Command.ECHO).arg("PONG"))).toString());
            }
            assertEquals(5, traced.size(), "traced: " + traced);
        } finally {
            own.close();
            tracing.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    /**
     * With several loops, each loop's pipe has its socket on that loop: a command and its answer stay on the thread
     * that sent it. Vert.x's Redis client opens its connections on the loop it was created on, so one client shared by
     * the loops put every pipe on one of them.
     */
    @Test
    void eachLoopsPipeLivesOnThatLoop() throws Exception {
        int loops = 4;
        Vertx several = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(loops));
        Pipes own = new Pipes(pooled, several, options());
        try {
            Set<Thread> threads = new HashSet<>();
            for (int i = 0; i < loops; i++) {
                Context context = ((VertxInternal) several).createEventLoopContext(); // each on the next loop, in turn
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (!on(context, () -> {
                    own.send(Request.cmd(Command.PING)); // starts this loop's pipe
                    return Future.succeededFuture(own.heldHere());
                })) {
                    assertTrue(System.nanoTime() < deadline, "no pipe within 10 s");
                    Thread.sleep(20);
                }
                assertTrue(on(context, () -> Future.succeededFuture(socketOf(own.connectionHere()).channelHandlerContext()
                        .executor().inEventLoop())), "loop " + i + "'s pipe has its socket on another loop");
                assertEquals("PONG", on(context, () -> own.send(Request.cmd(Command.PING))).toString());
                threads.add(on(context, () -> Future.succeededFuture(Thread.currentThread())));
            }
            assertEquals(loops, threads.size(), "the contexts were not on " + loops + " loops");
        } finally {
            own.close();
            several.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    /** The socket under a pipe: Vert.x keeps it in a field of the connection the pool lends. */
    private static NetSocketInternal socketOf(RedisConnection pipe) {
        Object actual = ((PooledRedisConnection) pipe).actual();
        try {
            Field socket = actual.getClass().getDeclaredField("netSocket");
            socket.setAccessible(true);
            return (NetSocketInternal) socket.get(actual);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("no netSocket in " + actual.getClass(), e);
        }
    }

    private static <T> T on(Context context, Supplier<Future<T>> call) throws Exception {
        CompletableFuture<T> result = new CompletableFuture<>();
        context.runOnContext(ignored -> {
            try {
                call.get().onComplete(r -> {
                    if (r.succeeded()) {
                        result.complete(r.result());
                    } else {
                        result.completeExceptionally(r.cause());
                    }
                });
            } catch (RuntimeException e) {
                result.completeExceptionally(e);
            }
        });
        return result.get(10, TimeUnit.SECONDS);
    }

    @Test
    void aKilledPipeIsReplacedAndTheCommandsAfterItAreAnswered() throws Exception {
        long first = awaitHeld(pipes);
        try (Jedis admin = admin()) { // the connection dies under the pipe, as when Redis restarts or a proxy resets it
            admin.clientKill(ClientKillParams.clientKillParams().id(Long.toString(first)));
        }
        // every command after the kill is answered: by the pool until this loop's pipe is back, then by the new pipe
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        long replacement;
        while (true) {
            assertEquals("PONG", onLoop(() -> pipes.send(Request.cmd(Command.PING))).toString());
            replacement = onLoop(() -> Future.succeededFuture(pipes.heldHere()))
                    ? onLoop(() -> pipes.send(Request.cmd(Command.CLIENT).arg("ID"))).toLong() : -1;
            if (replacement > 0 && replacement != first) {
                break;
            }
            assertTrue(System.nanoTime() < deadline, "no new pipe within 10 s");
            Thread.sleep(50);
        }
        assertNotEquals(first, replacement);
    }

    @Test
    void aPipeDroppedWhileRedisIsFrozenFailsItsWaitingCommandsAndIsReplaced() throws Exception {
        long first = awaitHeld(pipes);
        server.pause();
        try {
            CompletableFuture<Response> waiting = onLoopAsync(() -> pipes.send(Request.cmd(Command.INCR).arg("pipes:dropped")));
            onLoop(() -> {
                pipes.dropHere(); // what RedisCommands does when a command on the pipe goes unanswered
                return Future.succeededFuture(null);
            });
            // the dropped pipe's socket is closed, so the command waiting on it fails now, not when Redis wakes
            assertTrue(failedWithin(waiting, 5), "the command waiting on the dropped pipe failed");
        } finally {
            server.resume();
        }
        assertFalse(onLoop(() -> Future.succeededFuture(pipes.heldHere())), "the dropped pipe is gone");
        long second = awaitHeld(pipes);
        assertNotEquals(first, second);
        assertEquals("PONG", onLoop(() -> pipes.send(Request.cmd(Command.PING))).toString());
    }

    @Test
    void aPipeClosedUnheardIsDroppedAtItsNextCommandWhichThePoolAnswers() throws Exception {
        long first = awaitHeld(pipes);
        // the pipe's connection closes and its end is never heard: the one window in which the pipe could outlive it
        onLoop(() -> {
            RedisConnection connection = pipes.connectionHere();
            connection.endHandler(null);
            connection.exceptionHandler(null);
            ((PooledRedisConnection) connection).actual().forceClose();
            return Future.succeededFuture(null);
        });
        // the next command is written nowhere by the closed connection: the pool answers it, and the pipe is dropped
        assertEquals("PONG", onLoop(() -> pipes.send(Request.cmd(Command.PING))).toString());
        assertFalse(onLoop(() -> Future.succeededFuture(pipes.heldHere())), "the closed pipe is dropped");
        assertNotEquals(first, awaitHeld(pipes));
    }

    /** Redis's read events while {@code COMMANDS} commands are sent on the loop to a frozen Redis, which then answers them. */
    private static long readsFor(Pipes pipes) throws Exception {
        long before = RedisStats.readsProcessed(server.port());
        List<CompletableFuture<Response>> answers;
        server.pause();
        try {
            answers = onLoop(() -> {
                List<CompletableFuture<Response>> sent = new ArrayList<>();
                for (int i = 0; i < COMMANDS; i++) {
                    sent.add(pipes.send(Request.cmd(Command.INCR).arg("pipes:n")).toCompletionStage().toCompletableFuture());
                }
                return Future.succeededFuture(sent);
            });
            Thread.sleep(200); // every command written into the sockets while Redis sleeps
        } finally {
            server.resume();
        }
        for (CompletableFuture<Response> answer : answers) {
            assertTrue(answer.get(10, TimeUnit.SECONDS).toLong() > 0);
        }
        return RedisStats.readsProcessed(server.port()) - before - 1; // less INFO's own read
    }

    /** Waits until the loop holds a pipe; its Redis client id. */
    private static long awaitHeld(Pipes pipes) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!onLoop(() -> {
            pipes.send(Request.cmd(Command.PING)); // the first command on a loop starts its pipe's connect
            return Future.succeededFuture(pipes.heldHere());
        })) {
            assertTrue(System.nanoTime() < deadline, "no pipe within 10 s");
            Thread.sleep(20);
        }
        return onLoop(() -> pipes.send(Request.cmd(Command.CLIENT).arg("ID"))).toLong();
    }

    private static boolean failedWithin(CompletableFuture<?> future, int seconds) throws InterruptedException {
        try {
            future.get(seconds, TimeUnit.SECONDS);
            return false;
        } catch (java.util.concurrent.ExecutionException expected) {
            return true;
        } catch (java.util.concurrent.TimeoutException stillWaiting) {
            return false;
        }
    }

    private static <T> T onLoop(Supplier<Future<T>> call) throws Exception {
        return onLoopAsync(call).get(10, TimeUnit.SECONDS);
    }

    private static <T> CompletableFuture<T> onLoopAsync(Supplier<Future<T>> call) {
        CompletableFuture<T> result = new CompletableFuture<>();
        loop.runOnContext(ignored -> call.get().onComplete(r -> {
            if (r.succeeded()) {
                result.complete(r.result());
            } else {
                result.completeExceptionally(r.cause());
            }
        }));
        return result;
    }

    private static Jedis admin() {
        return new Jedis("127.0.0.1", server.port());
    }
}
