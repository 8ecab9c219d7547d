package dev.ledgerline.devstack;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A real Redis server (6.2, the binary shipped in the {@code embedded-redis} artifact) run as a child
 * process that this JVM owns: nothing is installed, nothing persists, and tests can pause, kill and
 * restart it without touching any other Redis on the machine.
 */
public final class LocalRedis implements AutoCloseable {

    private static final String BINARY = "/redis-server-6.2.6-v5-linux-amd64";

    private final int port;
    private final Path workDir;
    private final List<String> extraArgs;
    private final boolean tls;
    private Process process;

    private LocalRedis(int port, Path workDir, List<String> extraArgs) {
        this(port, workDir, extraArgs, false);
    }

    private LocalRedis(int port, Path workDir, List<String> extraArgs, boolean tls) {
        this.port = port;
        this.workDir = workDir;
        this.extraArgs = extraArgs;
        this.tls = tls;
    }

    /** Starts a Redis on a free loopback port and waits until it accepts connections. */
    public static LocalRedis start() throws IOException {
        return start(FreePorts.find());
    }

    public static LocalRedis start(int port) throws IOException {
        LocalRedis redis = new LocalRedis(port, Files.createTempDirectory("ledgerline-redis-"), List.of());
        redis.launch();
        return redis;
    }

    /**
     * Starts a Redis that speaks only TLS on a free loopback port ({@link #uri()} is {@code rediss://}), presenting
     * {@code certificate} and its {@code key}; it asks clients for no certificate. The binary links the system's
     * OpenSSL 3 ({@code libssl.so.3}).
     */
    public static LocalRedis startTls(Path certificate, Path key) throws IOException {
        int port = FreePorts.find();
        LocalRedis redis = new LocalRedis(port, Files.createTempDirectory("ledgerline-redis-tls-"),
                List.of("--tls-port", Integer.toString(port), "--tls-cert-file", certificate.toString(),
                        "--tls-key-file", key.toString(), "--tls-auth-clients", "no"), true);
        redis.launch();
        return redis;
    }

    /**
     * Starts a Redis Cluster node on a free loopback port whose bus port is free too ({@link FreePorts#findWithBus}):
     * cluster mode on, no slots and no peers yet (the caller joins the nodes). Its cluster state file lives in its own directory, so a restart keeps its
     * identity and role, as a real node's would.
     */
    public static LocalRedis startClusterNode(Duration nodeTimeout) throws IOException {
        return clusterNode(FreePorts.findWithBus(), Files.createTempDirectory("ledgerline-redis-cluster-"), nodeTimeout);
    }

    /**
     * Starts a cluster node again on its old port and directory, as after a crash: it reads its cluster
     * state file and rejoins with its identity (a master whose replica took over comes back as a replica).
     */
    public static LocalRedis restartClusterNode(int port, Path workDir, Duration nodeTimeout) throws IOException {
        return clusterNode(port, workDir, nodeTimeout);
    }

    private static LocalRedis clusterNode(int port, Path workDir, Duration nodeTimeout) throws IOException {
        LocalRedis redis = new LocalRedis(port, workDir,
                List.of("--cluster-enabled", "yes",
                        "--cluster-config-file", "nodes.conf",
                        "--cluster-node-timeout", Long.toString(nodeTimeout.toMillis()),
                        // a replica with a stale link may still be promoted: the test, not the timing, decides
                        "--cluster-replica-validity-factor", "0"));
        redis.launch();
        return redis;
    }

    /** Extracts the server binary once per JVM; the artifact ships it as a class-path resource. */
    static synchronized Path binary() throws IOException {
        Path target = Path.of(System.getProperty("java.io.tmpdir"), "ledgerline-redis-6.2.6-" + ProcessHandle.current().pid());
        if (Files.isExecutable(target)) {
            return target;
        }
        try (InputStream in = LocalRedis.class.getResourceAsStream(BINARY)) {
            if (in == null) {
                throw new IOException("The embedded-redis artifact does not contain " + BINARY + " for this platform");
            }
            Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
        }
        Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rwx------"));
        target.toFile().deleteOnExit();
        return target;
    }

    private void launch() throws IOException {
        List<String> command = new ArrayList<>(List.of(binary().toString(),
                // a TLS server listens on its tls-port only
                "--port", tls ? "0" : Integer.toString(port),
                "--bind", "127.0.0.1",
                "--save", "",
                "--appendonly", "no",
                "--protected-mode", "no",
                "--daemonize", "no",
                "--dir", workDir.toString()));
        command.addAll(extraArgs);
        process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(workDir.resolve("redis.log").toFile())
                .start();
        FreePorts.awaitListening(port, Duration.ofSeconds(10), process);
    }

    public int port() {
        return port;
    }

    public String uri() {
        return (tls ? "rediss" : "redis") + "://127.0.0.1:" + port;
    }

    public long pid() {
        return process.pid();
    }

    public boolean isRunning() {
        return process != null && process.isAlive();
    }

    /** Freezes the server (SIGSTOP): connections stay open but nothing is answered. */
    public void pause() throws IOException {
        Signals.send("STOP", pid());
    }

    /** Resumes a paused server (SIGCONT). */
    public void resume() throws IOException {
        Signals.send("CONT", pid());
    }

    /** Kills the server (SIGKILL); everything it held is lost, as after a crash. */
    public void kill() {
        if (process != null) {
            if (process.isAlive()) { // one stopped with the terminal (Ctrl+C) needs no resuming, nor an error line
                Signals.resumeQuietly(pid());
            }
            process.destroyForcibly();
            try {
                process.waitFor();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Starts a new, empty server on the same port, as after a restart without persistence. */
    public void restart() throws IOException {
        kill();
        launch();
    }

    @Override
    public void close() {
        kill();
    }
}
