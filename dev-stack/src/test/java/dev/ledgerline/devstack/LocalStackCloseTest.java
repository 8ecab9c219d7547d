package dev.ledgerline.devstack;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Stopping the local stack leaves nothing behind: PostgreSQL's data directory (tens of megabytes in the temp folder)
 * is deleted, also when the server was already stopping by itself, as after Ctrl+C in a terminal, which signals the
 * postmaster together with the JVM.
 */
class LocalStackCloseTest {

    @Test
    void closingTheStackDeletesPostgresDataDirectory() {
        LocalStack stack = LocalStack.start();
        Path data = stack.postgres().dataDir();
        assertTrue(Files.isDirectory(data.resolve("base")), "a cluster was initialised in " + data);

        stack.close();

        assertFalse(Files.exists(data), "data directory left behind: " + data);
        assertFalse(stack.postgres().isRunning());
        assertDoesNotThrow(stack::close, "a second close does nothing");
    }

    @Test
    void closingWhilePostgresStopsOnItsOwnIsQuietAndDeletesTheDataDirectory() throws Exception {
        LocalStack stack = LocalStack.start();
        Path data = stack.postgres().dataDir();

        // what Ctrl+C does to the postmaster: SIGINT, a fast shutdown, racing the JVM's own shutdown hook
        Signals.send("INT", stack.postgres().pid());
        assertDoesNotThrow(stack::close);

        assertFalse(Files.exists(data), "data directory left behind: " + data);
    }
}
