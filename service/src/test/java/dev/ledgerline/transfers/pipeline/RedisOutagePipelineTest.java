package dev.ledgerline.transfers.pipeline;

import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Await;
import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.Sandbox;
import dev.ledgerline.transfers.support.TestStack;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static dev.ledgerline.transfers.support.Api.writer;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** Without Redis the pipeline is slower, never wrong: the database claim alone keeps each payment to one execution. */
@QuarkusTest
class RedisOutagePipelineTest {

    @AfterEach
    void heal() throws Exception {
        TestStack.heal();
        Sandbox.reset();
    }

    @Test
    void twoHundredTransfersCompleteWithRedisStoppedEachExecutedOnce() throws Exception {
        Sandbox.faults(Map.of("idempotent", false));
        Api.create(writer("redisless"), 1); // a token and a warm path before the outage
        TestStack.current().redis().kill();

        List<String> ids = Collections.synchronizedList(new ArrayList<>());
        ExecutorService clients = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> sent = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                long amount = 100 + i;
                sent.add(clients.submit(() -> ids.add(Api.create(writer("redisless"), amount))));
            }
            for (Future<?> f : sent) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            clients.shutdownNow();
        }
        assertEquals(200, ids.size());
        Await.allTerminal(ids, Duration.ofSeconds(60));
        assertEquals(200, Db.count("SELECT count(*) FROM transfers WHERE id = ANY(?::uuid[]) AND status = 'sent'",
                (Object) ids.toArray(String[]::new)));
        for (String id : ids) {
            Sandbox.exactlyOneExecution(id);
        }
    }
}
