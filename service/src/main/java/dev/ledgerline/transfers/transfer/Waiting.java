package dev.ledgerline.transfers.transfer;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import io.vertx.core.Context;
import io.vertx.core.Vertx;

import java.util.Queue;

/**
 * A caller of a batching queue ({@link BatchQueue}, {@link ProbeQueue}) waiting for the answer about its {@code item}:
 * answered on the caller's own Vert.x context, not on the one that ran the batch.
 */
record Waiting<T, R>(T item, Context context, UniEmitter<? super R> emitter) {

    /** Queues {@code item} for the calling context when subscribed, then lets the queue send what it can. */
    static <T, R> Uni<R> queue(Queue<Waiting<T, R>> queue, T item, Runnable send) {
        return Uni.createFrom().emitter(emitter -> {
            queue.add(new Waiting<>(item, Vertx.currentContext(), emitter));
            send.run();
        });
    }

    void complete(R answer) {
        run(() -> emitter.complete(answer));
    }

    void fail(Throwable failure) {
        run(() -> emitter.fail(failure));
    }

    private void run(Runnable answer) {
        if (context == null) {
            answer.run();
        } else {
            context.runOnContext(ignored -> answer.run());
        }
    }
}
