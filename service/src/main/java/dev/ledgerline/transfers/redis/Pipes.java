package dev.ledgerline.transfers.redis;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoop;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.netty.util.concurrent.FastThreadLocal;
import io.netty.util.internal.ThreadExecutorMap;
import io.quarkus.redis.client.RedisOptionsCustomizer;
import io.quarkus.redis.runtime.client.config.RedisConfig;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.impl.ContextInternal;
import io.vertx.core.impl.VertxInternal;
import io.vertx.core.net.impl.NetSocketInternal;
import io.vertx.redis.client.Redis;
import io.vertx.redis.client.RedisClientType;
import io.vertx.redis.client.RedisConnection;
import io.vertx.redis.client.RedisOptions;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import io.vertx.redis.client.impl.PooledRedisConnection;
import io.vertx.redis.client.impl.RedisConnectionInternal;
import io.vertx.redis.client.impl.RedisStandaloneConnection;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import java.lang.reflect.Field;
import java.nio.channels.ClosedChannelException;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

/**
 * One Redis connection per event loop, held for as long as it works, on which that loop's commands are pipelined.
 *
 * <p>The pooled client leases a connection per command and returns it with the answer, so each command is one
 * connection's only traffic: Redis reads it alone and writes its answer alone (a {@code read} and a {@code write} per
 * command, most of a short command's cost in Redis), and this process pays the lease and a socket wake-up per answer.
 * On a held connection the commands that one loop sends while Redis is busy arrive together; Redis reads them in one
 * call and answers them in one write, and the answers are read together here. Redis answers a connection's commands in
 * order and Vert.x matches them to their senders in that order, so a command whose sender stopped waiting (a timeout)
 * still takes its own answer when it comes, never another command's.
 *
 * <p>Only the loop that connected uses a pipe, and the pipe's socket lives on that loop, so a command and its answer
 * never cross threads. Each loop's pipe comes from a client of its own, created on that loop, with the same options as
 * the application's: Vert.x's Redis client opens every connection on the event loop of the context it was created
 * from, whichever loop asks, so one client shared by the loops put every pipe on one loop, and each command from the
 * other loops was handed to it and its answer handed back (two thread wake-ups: bench/CPU-AB.md, "Each loop's pipe on
 * its own loop"). A command from anywhere else (a worker thread),
 * before the loop's pipe is connected, or while it reconnects goes through the application's pooled client, as
 * before: the pipe makes commands cheaper, never possible. A pipe is dropped when its connection ends or fails, and by
 * {@link #dropHere()} when a command on it went unanswered while Redis answered nothing (a connection that may be
 * dead without having been told): its socket is closed, so it never goes back to a pool, and the commands still
 * waiting on it fail at once. A command the pipe refuses because its socket closed before the end reached us goes to
 * the pool instead, and the pipe is dropped. The next command reconnects a dropped pipe, at most once a second while
 * connecting fails. Only a standalone Redis is pipelined so: a cluster or sentinel client keeps the pool.
 *
 * <p>A failed command may still have been applied: written before its pipe closed, Redis may read and run it after
 * its sender was told it failed, as with any command that timed out. Every caller already takes a failed command as
 * "unknown" and lets PostgreSQL decide. Measured in bench/CPU-AB.md ("One connection per event loop").
 */
final class Pipes {

    private static final Logger LOG = Logger.getLogger(Pipes.class);
    private static final long RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** How Vert.x fails a command sent on a connection it has closed. */
    private static final String CLOSED = "Connection is closed";
    /** The name of the pipe's flush coalescer in its channel's pipeline. */
    private static final String COALESCER = "ledgerline-coalesced-flushes";
    private static final Field NET_SOCKET = socketField();

    /** The pooled client: worker threads, and event loops without a pipe. */
    private final Redis pooled;
    private final Vertx vertx;
    /** The pipes' options (a pool of two: the pipe, and its replacement while the old socket closes), or {@code null} when nothing is pipelined. */
    private final RedisOptions pipelined;
    /** Every loop's own client, to close. */
    private final Queue<Redis> clients = new ConcurrentLinkedQueue<>();
    private final FastThreadLocal<Pipe> pipes = new FastThreadLocal<>() {
        @Override
        protected Pipe initialValue() {
            return new Pipe();
        }
    };

    /**
     * @param options the application client's options as Quarkus built them ({@link Options}), or {@code null} to
     *                pipeline nothing
     */
    Pipes(Redis pooled, Vertx vertx, RedisOptions options) {
        this.pooled = pooled;
        this.vertx = vertx;
        if (options == null || options.getType() != RedisClientType.STANDALONE) {
            this.pipelined = null;
            return;
        }
        RedisOptions own = new RedisOptions(options);
        own.setMaxPoolSize(2);
        own.setMaxPoolWaiting(2);
        this.pipelined = own;
    }

    /** Sends on this loop's pipe when it has one, through the pool otherwise. */
    Future<Response> send(Request request) {
        Pipe pipe = here();
        if (pipe == null) {
            return pooled.send(request);
        }
        if (pipe.channel != null && !pipe.channel.isActive()) {
            // the socket has closed and its end is still on the way to the connection: a command written now would
            // fail there, and Vert.x would end the connection for that failure and again for the close
            pipe.drop();
            return pooled.send(request);
        }
        Future<Response> answer = pipe.sender.send(request);
        if (answer.failed()) {
            // failed before it was written: the connection closed without our hearing of it, or its queue is full
            if (closed(answer.cause())) {
                pipe.drop();
            }
            return pooled.send(request);
        }
        return answer;
    }

    /** This event loop's pipe when it holds a connection, or {@code null} (not on an event loop, or not connected yet). */
    private Pipe here() {
        if (pipelined == null || !Context.isOnEventLoopThread()) {
            return null;
        }
        Pipe pipe = pipes.get();
        if (pipe.connection == null) {
            if (!pipe.connecting && System.nanoTime() - pipe.failedAt >= RETRY_NANOS) {
                pipe.connect(this);
            }
            return null;
        }
        return pipe;
    }

    /** Drops this loop's pipe: its commands failed unanswered; the ones still waiting on it fail now, not at a timeout. */
    void dropHere() {
        if (pipelined == null || !Context.isOnEventLoopThread()) {
            return;
        }
        Pipe pipe = pipes.get();
        if (pipe.connection != null) {
            LOG.debug("closing this event loop's Redis pipe: a command on it went unanswered");
            pipe.drop();
        }
    }

    /** A send refused by a connection that is closed, or whose socket is, before its end reached us. */
    private static boolean closed(Throwable error) {
        return error instanceof ClosedChannelException || CLOSED.equals(error.getMessage());
    }

    /** Closes the connection's socket: closing a pooled connection alone would hand it, unanswered commands and all, back to its pool. */
    private static void discard(RedisConnection connection) {
        if (connection instanceof PooledRedisConnection pooledConnection) {
            pooledConnection.actual().forceClose();
        }
        connection.close();
    }

    void close() {
        for (Redis client; (client = clients.poll()) != null; ) {
            client.close();
        }
    }

    /** The calling event loop's own context: the current one unwrapped, or one made for this loop when there is none. */
    private ContextInternal home() {
        ContextInternal current = (ContextInternal) Vertx.currentContext();
        if (current != null) {
            return current.unwrap();
        }
        if (ThreadExecutorMap.currentExecutor() instanceof EventLoop loop) {
            return ((VertxInternal) vertx).createEventLoopContext(loop, null, Thread.currentThread().getContextClassLoader());
        }
        return (ContextInternal) vertx.getOrCreateContext(); // not expected on an event-loop thread
    }

    /** A client for the calling loop's pipe; call it on that loop's own context, where its connections will live. */
    private Redis newClient() {
        Redis client = Redis.createClient(vertx, pipelined);
        clients.add(client);
        return client;
    }

    /** Whether the calling event loop holds a pipe now (tests). */
    boolean heldHere() {
        return connectionHere() != null;
    }

    /** The calling event loop's pipe, or {@code null} (tests). */
    RedisConnection connectionHere() {
        return pipelined != null && Context.isOnEventLoopThread() ? pipes.get().connection : null;
    }

    private static final class Pipe {
        /** This loop's own client, created on its context the first time it connects. */
        Redis client;
        RedisConnection connection;
        /** What the pipe's commands are sent on: {@link #connection}, or the socket's connection under it ({@link #unreported}). */
        RedisConnection sender;
        /** The pipe's socket, when Vert.x lets it be reached ({@link #coalesceFlushes}). */
        Channel channel;
        boolean connecting;
        long failedAt = System.nanoTime() - RETRY_NANOS;

        void connect(Pipes pipes) {
            connecting = true;
            // from this loop's own context: the client is created there, so its connections live on this loop, and
            // the connect holds on to nothing of the request whose command found the pipe missing (a request runs on
            // a context duplicated for it)
            pipes.home().dispatch(ignored -> {
                if (client == null) {
                    client = pipes.newClient();
                }
                open(client);
            });
        }

        private void open(Redis client) {
            client.connect().onComplete(result -> {
                connecting = false;
                if (result.failed()) {
                    failedAt = System.nanoTime();
                    return;
                }
                RedisConnection held = result.result();
                held.endHandler(ignored -> lost(held));
                held.exceptionHandler(error -> {
                    lost(held);
                    discard(held);
                });
                channel = coalesceFlushes(held);
                sender = unreported(held);
                connection = held;
            });
        }

        /** Forgets the held connection and closes its socket. */
        void drop() {
            RedisConnection held = connection;
            lost(held);
            discard(held);
        }

        private void lost(RedisConnection held) {
            if (connection == held) {
                connection = null;
                sender = null;
                channel = null;
                failedAt = System.nanoTime();
            }
        }
    }

    /**
     * Lets the commands one event-loop task sends on {@code pipe} leave in one write. Vert.x flushes a command the moment
     * it is written unless the connection is reading at that time, so the commands a loop sends while it handles HTTP
     * requests, PostgreSQL rows or the provider's answers each cost a {@code sendto} here and a read in Redis. Netty's
     * {@link FlushConsolidationHandler}, placed between Vert.x's handler and the socket ({@link Coalescer}), holds those
     * flushes until the loop has run what is ready now, then flushes once: nothing waits for another wake-up. Vert.x
     * keeps the socket in a private field of its connection; when a release renames it, the pipe works as before, each
     * command flushed alone ({@code PipesTest} fails then).
     *
     * @return the pipe's channel, or {@code null} when it cannot be reached
     */
    private static Channel coalesceFlushes(RedisConnection pipe) {
        if (NET_SOCKET == null || !(pipe instanceof PooledRedisConnection pooledConnection)
                || !(pooledConnection.actual() instanceof RedisStandaloneConnection standalone)) {
            return null;
        }
        try {
            if (NET_SOCKET.get(standalone) instanceof NetSocketInternal socket) {
                ChannelHandlerContext vertx = socket.channelHandlerContext();
                vertx.pipeline().addBefore(vertx.name(), COALESCER, new Coalescer());
                return vertx.channel();
            }
        } catch (IllegalAccessException | RuntimeException e) {
            LOG.debugf("step=redis-pipe each command is flushed alone: %s", e);
        }
        return null;
    }

    /**
     * The connection to send {@code pipe}'s commands on. The pool's connection reports each command to Vert.x's tracer
     * and client meters, and builds the report's strings (the server's address and port, among others) for every
     * command even when it has neither: 2 % of a new transfer's samples. With neither, the commands go to the
     * socket's connection under it, which the pool's only wraps; the pipe is still closed and watched as the pool's.
     */
    private static RedisConnection unreported(RedisConnection pipe) {
        if (pipe instanceof PooledRedisConnection pooledConnection) {
            RedisConnectionInternal actual = pooledConnection.actual();
            if (actual.metrics() == null && actual.vertx().tracer() == null) {
                return actual;
            }
        }
        return pipe;
    }

    /**
     * Netty's consolidation of flushes, with two changes for Vert.x's Redis connection.
     *
     * <p>Vert.x closes a connection once an empty write it flushes has gone out: that write leaves at once, so a
     * closing pipe closes, and its end is heard, before the loop runs its next task, as without the coalescer.
     *
     * <p>A write still held when the socket closes (Redis went away, or the pipe was discarded) fails with the socket.
     * Vert.x's connection takes a failed write as its end ({@code fail}), and then ends again when the socket's close
     * reaches it ({@code end}): twice evicted, it gave back its pool's reference twice, which can close the pool and the
     * loop's next pipe with it. Such a failure is not passed on: the close ends the connection once, and that end
     * fails every command still waiting for an answer, the held one among them. A write to a socket closed already, and
     * one that fails on an open socket, fail as before.
     */
    private static final class Coalescer extends FlushConsolidationHandler {
        Coalescer() {
            super(DEFAULT_EXPLICIT_FLUSH_AFTER_FLUSHES, true);
        }

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            if (promise.isVoid() || !ctx.channel().isActive()) {
                // on a socket closed already the write fails now, and its sender hears it at once (Pipes#send)
                ctx.write(msg, promise);
            } else {
                ChannelPromise held = ctx.newPromise();
                held.addListener(written -> {
                    if (written.isSuccess()) {
                        promise.trySuccess();
                    } else if (ctx.channel().isActive()) {
                        promise.tryFailure(written.cause());
                    }
                });
                ctx.write(msg, held);
            }
            if (msg instanceof ByteBuf buffer && !buffer.isReadable()) {
                ctx.flush();
            }
        }
    }

    /** Vert.x's socket field of a standalone connection, or {@code null} when this release has none. */
    private static Field socketField() {
        try {
            Field field = RedisStandaloneConnection.class.getDeclaredField("netSocket");
            field.setAccessible(true);
            return field;
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.debugf("step=redis-pipe no socket field on Vert.x's Redis connection: %s", e);
            return null;
        }
    }

    /** Keeps a copy of the options Quarkus built for the application's Redis client, for the pipes' own client. */
    @Singleton
    public static class Options implements RedisOptionsCustomizer {
        private volatile RedisOptions options;

        @Override
        public void customize(String client, RedisOptions options) {
            if (RedisConfig.DEFAULT_CLIENT_NAME.equals(client)) {
                this.options = new RedisOptions(options);
            }
        }

        /** The default client's options once Quarkus has created it; {@code null} before. */
        RedisOptions get() {
            return options;
        }
    }
}
