package dev.ledgerline.devstack;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Two test JVMs side by side pick ports from windows that neither each other nor outgoing connections reach. */
class FreePortsTest {

    @AfterEach
    void noWindow() {
        System.clearProperty(FreePorts.WINDOW_PROPERTY);
    }

    @Test
    void aWindowGivesItsOwnPortsInTurnBelowTheEphemeralRange() throws IOException {
        System.setProperty(FreePorts.WINDOW_PROPERTY, "16000");
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < 50; i++) {
            int port = FreePorts.find();
            assertTrue(port >= 16_000 && port < 16_500, "the window is 16000–16499: " + port);
            assertTrue(seen.add(port), "a port handed out twice: " + port);
        }
    }

    @Test
    void aPortInUseIsSkipped() throws IOException {
        System.setProperty(FreePorts.WINDOW_PROPERTY, "15000");
        int first = FreePorts.find();
        int next = first + 1 < 15_500 ? first + 1 : 15_000;
        try (ServerSocket taken = new ServerSocket(next, 1, InetAddress.getLoopbackAddress())) {
            int found = FreePorts.find();
            assertNotEquals(next, found, "the port a listener holds");
            assertTrue(found >= 15_000 && found < 15_500, "still the window: " + found);
        }
    }

    @Test
    void aClusterNodesPortIsSkippedWhenItsBusPortIsHeld() throws IOException {
        System.setProperty(FreePorts.WINDOW_PROPERTY, "15000");
        int first = FreePorts.find();
        int next = first + 1 < 15_500 ? first + 1 : 15_000;
        // a listener on the bus port of the port that comes next, as the test HTTP port once was (21081 for 11081)
        try (ServerSocket bus = new ServerSocket(next + FreePorts.BUS_OFFSET, 1, InetAddress.getLoopbackAddress())) {
            int found = FreePorts.findWithBus();
            assertNotEquals(next, found, "a node there could not bind its bus port " + (next + FreePorts.BUS_OFFSET));
            assertTrue(found >= 15_000 && found < 15_500, "still the window: " + found);
        }
    }

    @Test
    void withoutAWindowTheKernelPicksAndABadWindowIsRefused() throws IOException {
        int port = FreePorts.find();
        assertTrue(port > 0);
        System.setProperty(FreePorts.WINDOW_PROPERTY, "30000");
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, FreePorts::find);
        assertEquals(FreePorts.WINDOW_PROPERTY + " must be a port from 10000 to 22268, not '30000'", refused.getMessage(),
                "a window whose cluster bus ports would reach the ephemeral range");
    }
}
