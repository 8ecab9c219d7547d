package dev.ledgerline.devstack;

import java.io.IOException;

/** Sends POSIX signals to the local servers (pause, resume) for fault tests. */
public final class Signals {

    private Signals() {
    }

    public static void send(String signal, long pid) throws IOException {
        try {
            int code = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).inheritIO().start().waitFor();
            if (code != 0) {
                throw new IOException("kill -" + signal + " " + pid + " exited with " + code);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("Interrupted while signalling " + pid, e);
        }
    }

    static void resumeQuietly(long pid) {
        try {
            send("CONT", pid);
        } catch (IOException ignored) {
            // the process is being killed anyway
        }
    }
}
