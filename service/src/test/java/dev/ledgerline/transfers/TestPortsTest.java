package dev.ledgerline.transfers;

import dev.ledgerline.devstack.FreePorts;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The ports a test JVM of the suite listens on by a fixed number (the application's HTTP and management ports, from
 * the service's pom) lie below every window of ports the JVM hands to the servers it starts, and so below every Redis
 * cluster node's bus port too. A cluster node keeps its bus port for the JVM's life: one on the HTTP port fails every
 * later start of the application in that JVM.
 */
class TestPortsTest {

    @Test
    void theFixedPortsStayBelowEveryWindowAndEveryBusPort() {
        String window = System.getProperty(FreePorts.WINDOW_PROPERTY);
        assumeTrue(window != null, "run outside the suite's forks: the kernel picks every port");
        int from = Integer.parseInt(window.trim());
        assertTrue(from >= FreePorts.LOWEST_WINDOW, "the window starts at " + from);
        for (String property : new String[] {"quarkus.http.test-port", "quarkus.management.test-port"}) {
            int port = Integer.parseInt(System.getProperty(property, "-1"));
            assertTrue(port > 0, property + " is set by the pom");
            assertTrue(port < FreePorts.LOWEST_WINDOW, property + "=" + port + " can be a port of a window (from "
                    + FreePorts.LOWEST_WINDOW + ") or a cluster node's bus port (" + FreePorts.BUS_OFFSET + " above one)");
        }
    }
}
