package dev.ledgerline.transfers.pipeline;

import dev.ledgerline.transfers.support.Api;
import dev.ledgerline.transfers.support.Await;
import dev.ledgerline.transfers.support.Sandbox;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static dev.ledgerline.transfers.support.Api.writer;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A worker stuck in its provider call for longer than its lock TTL and lease (the send timeout is
 * switched off here, which is what a paused worker looks like from outside). Another worker takes the
 * transfer over through the sweeper; when the stuck one wakes up, its final UPDATE is fenced off.
 */
@QuarkusTest
@TestProfile(StaleWorkerTest.StuckInSend.class)
class StaleWorkerTest {

    public static class StuckInSend implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("quarkus.fault-tolerance.\"dev.ledgerline.transfers.provider.ProviderClient/send\".timeout.enabled", "false");
        }
    }

    @Inject
    MeterRegistry metrics;

    @AfterEach
    void healthyProvider() {
        Sandbox.reset();
    }

    @Test
    void aWorkerPausedPastItsLeaseCannotOverwriteTheNewerState() {
        // one transfer through a healthy provider first: the first send of a fresh JVM builds the REST client,
        // which on a loaded machine can outlast the send's 1 s deadline, and then the send is never written
        Await.status(Api.create(writer("alice"), 1999), "sent", Duration.ofSeconds(15));
        double staleBefore = staleWrites();
        Sandbox.faults(Map.of("idempotent", false, "latencyMs", 6000));
        String id = Api.create(writer("alice"), 2000);

        // the lease (3 s) expires while the first worker waits; the sweeper reconciles by lookup
        Await.status(id, "sent", Duration.ofSeconds(15));
        assertEquals(List.of("pending", "processing", "reconciling", "sent"), PipelineTest.history(id));

        // the first worker's answer arrives at ~6 s: its fenced UPDATE must change nothing, and be counted
        Awaitility.await("the stale write is fenced off and counted").atMost(Duration.ofSeconds(15))
                .until(() -> staleWrites() > staleBefore);
        assertEquals("sent", Await.dbStatus(id));
        assertEquals(List.of("pending", "processing", "reconciling", "sent"), PipelineTest.history(id));
        PipelineTest.exactlyOneExecution(id);
    }

    private double staleWrites() {
        var counter = metrics.find("ledgerline.fence.stale").counter();
        return counter == null ? 0 : counter.count();
    }
}
