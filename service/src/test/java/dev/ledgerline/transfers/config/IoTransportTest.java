package dev.ledgerline.transfers.config;

import io.quarkus.test.junit.QuarkusTest;
import io.vertx.core.Vertx;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * On Linux on the CPUs the pom ships a library for, the service's Vert.x runs on Netty's native epoll transport: a
 * dependency dropped, a setting turned off or a library that no longer loads fails here, instead of showing only as
 * more CPU per request in the next benchmark.
 */
@QuarkusTest
class IoTransportTest {

    @Inject
    Vertx vertx;

    @Test
    void theServerAndItsClientsRunOnTheNativeEpollTransport() {
        String arch = System.getProperty("os.arch", "");
        assumeTrue(IoTransport.linux() && (arch.equals("amd64") || arch.equals("aarch64")),
                "the pom ships the epoll library for Linux x86_64 and aarch64 only");
        assertTrue(vertx.isNativeTransportEnabled(),
                () -> "Vert.x runs on NIO: " + vertx.unavailableNativeTransportCause());
    }
}
