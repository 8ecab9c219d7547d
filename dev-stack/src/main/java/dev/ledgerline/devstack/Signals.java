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

    /** SIGCONT, printing nothing: the process may have exited meanwhile (Ctrl+C reaches it too), and is being killed anyway. */
    static void resumeQuietly(long pid) {
        try {
            new ProcessBuilder("kill", "-CONT", Long.toString(pid))
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start().waitFor();
        } catch (IOException ignored) {
            // no kill binary: nothing to resume with
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
