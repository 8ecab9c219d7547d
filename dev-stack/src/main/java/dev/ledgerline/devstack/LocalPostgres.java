package dev.ledgerline.devstack;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

import java.io.IOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A real PostgreSQL 17 server (zonky's embedded binaries) owned by this JVM. It can be stopped and
 * started again on the same port and data directory, so tests can take the database away and give it
 * back without touching the machine's own PostgreSQL.
 *
 * <p>{@link #close()} stops the server and deletes its data directory, and runs by itself when the JVM exits (one
 * shutdown hook of this class's own: zonky's hook would stop the server at the same time as the data directory is
 * walked for deletion, and a file the stopping server removed mid-walk aborted the deletion with a
 * {@code NoSuchFileException}, leaving the directory behind).
 */
public final class LocalPostgres implements AutoCloseable {

    public static final String DATABASE = "postgres";
    public static final String USER = "postgres";

    private static final Pattern PARAMETER = Pattern.compile("[a-z_]+");
    private static final Pattern VALUE = Pattern.compile("[A-Za-z0-9_.]+");

    private final int port;
    private final Path dataDir;
    private final Thread onExit = new Thread(this::closeQuietly, "local-postgres-stop");
    private EmbeddedPostgres server;
    private boolean closed;

    private LocalPostgres(int port, Path dataDir) {
        this.port = port;
        this.dataDir = dataDir;
    }

    /**
     * A stopped cluster that initdb made once in this JVM: every later start copies it instead of running initdb
     * again, which takes seconds (the test suite starts a cluster per Quarkus profile, the fault suite one per
     * scenario). {@code null} until the first start.
     */
    private static LocalPostgres template;

    /** Starts a fresh cluster on a free loopback port. */
    public static LocalPostgres start() throws IOException {
        Path initialised = template().dataDir;
        LocalPostgres pg = new LocalPostgres(FreePorts.find(), Files.createTempDirectory("ledgerline-pg-"));
        Runtime.getRuntime().addShutdownHook(pg.onExit);
        try {
            copyCluster(initialised, pg.dataDir);
            pg.launch();
        } catch (IOException | RuntimeException e) {
            pg.closeQuietly();
            throw e;
        }
        return pg;
    }

    /** The template, made on first use: initdb, one start (zonky runs initdb in it) and a clean stop. */
    private static synchronized LocalPostgres template() throws IOException {
        if (template == null) {
            LocalPostgres made = new LocalPostgres(FreePorts.find(), Files.createTempDirectory("ledgerline-pg-template-"));
            Runtime.getRuntime().addShutdownHook(made.onExit);
            try {
                made.launch();
                made.stop();
            } catch (IOException | RuntimeException e) {
                made.closeQuietly();
                throw e;
            }
            template = made;
        }
        return template;
    }

    /** A copy of a stopped cluster's files, without what belongs to one run of it (a pid or lock file). */
    private static void copyCluster(Path from, Path to) throws IOException {
        try (var files = Files.walk(from)) {
            for (Path source : (Iterable<Path>) files::iterator) {
                Path target = to.resolve(from.relativize(source).toString());
                String name = source.getFileName().toString();
                if (Files.isDirectory(source)) {
                    Files.createDirectories(target);
                } else if (!name.equals("postmaster.pid") && !name.equals("epg-lock")) {
                    Files.copy(source, target, java.nio.file.StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
        }
    }

    private void launch() throws IOException {
        server = EmbeddedPostgres.builder()
                .setPort(port)
                .setDataDirectory(dataDir)
                .setCleanDataDirectory(false) // the data outlives stop(); close() deletes it
                .setRegisterShutdownHook(false) // close() runs on exit instead, one step after the other
                .setPGStartupWait(Duration.ofSeconds(30))
                .setServerConfig("max_connections", "200")
                .setServerConfig("fsync", "off")
                .setServerConfig("synchronous_commit", "off")
                .setServerConfig("full_page_writes", "off")
                .setServerConfig("listen_addresses", "127.0.0.1")
                .setServerConfig("track_counts", "on")
                // lets tests count the statements the service really sent (e.g. "a replay writes nothing")
                .setServerConfig("shared_preload_libraries", "pg_stat_statements")
                .setServerConfig("pg_stat_statements.track", "all")
                .setOutputRedirector(ProcessBuilder.Redirect.DISCARD)
                .setErrorRedirector(ProcessBuilder.Redirect.DISCARD)
                .start();
    }

    public int port() {
        return port;
    }

    public String reactiveUrl() {
        return "postgresql://127.0.0.1:" + port + "/" + DATABASE;
    }

    public String jdbcUrl() {
        return "jdbc:postgresql://127.0.0.1:" + port + "/" + DATABASE;
    }

    public Path dataDir() {
        return dataDir;
    }

    /** The postmaster's pid, read from its pid file. */
    public long pid() throws IOException {
        List<String> lines = Files.readAllLines(dataDir.resolve("postmaster.pid"));
        return Long.parseLong(lines.get(0).trim());
    }

    /** Stops the server (fast shutdown) but keeps its data. */
    public void stop() throws IOException {
        if (server != null) {
            // closing with a kept data directory is a plain pg_ctl stop
            server.close();
            server = null;
        }
    }

    /**
     * Crashes the server: an immediate shutdown (SIGQUIT to the postmaster, which is what {@code pg_ctl stop -m
     * immediate} sends), so no server process writes anything more, not even the WAL still in shared memory.
     * With {@code synchronous_commit=off} the commits acknowledged in the last moments before are gone; the data
     * directory stays, and {@link #startAgain()} recovers from the WAL that reached the files, without them.
     */
    public void crash() throws IOException {
        if (server == null) {
            return;
        }
        long pid = pid();
        Signals.send("QUIT", pid);
        awaitExit(pid, Duration.ofSeconds(30));
        // The postmaster removes its pid file on the way out, immediate shutdown included. One left behind by a
        // process that is gone would make the next start refuse the data directory, so it must not survive this.
        Path pidFile = dataDir.resolve("postmaster.pid");
        if (Files.exists(pidFile) && Long.parseLong(Files.readAllLines(pidFile).get(0).trim()) == pid) {
            Files.delete(pidFile);
        }
        releaseCrashed();
    }

    private static void awaitExit(long pid, Duration within) throws IOException {
        Optional<ProcessHandle> postmaster = ProcessHandle.of(pid);
        if (postmaster.isEmpty()) {
            return;
        }
        try {
            postmaster.get().onExit().get(within.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while PostgreSQL " + pid + " shut down", e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IOException("PostgreSQL " + pid + " did not exit within " + within + " of SIGQUIT", e);
        }
    }

    /**
     * Lets go of the crashed server's handle, which holds a lock on the data directory that the next start needs.
     * Its close() also runs a fast pg_ctl stop, which fails on a server that is gone and logs that as an error:
     * muted here, since the server being gone is the point.
     */
    private void releaseCrashed() throws IOException {
        Logger zonky = Logger.getLogger(EmbeddedPostgres.class.getName());
        Level before = zonky.getLevel();
        zonky.setLevel(Level.OFF);
        try {
            server.close();
        } finally {
            zonky.setLevel(before);
            server = null;
        }
    }

    /** Starts the stopped or crashed server again on the same port with the same data. */
    public void startAgain() throws IOException {
        if (server == null) {
            launch();
        }
    }

    /**
     * Sets a parameter that a reload applies ({@code ALTER SYSTEM}, then {@code pg_reload_conf()}), or resets it
     * with {@code null}. It is written to the data directory, so it holds through stops and crashes until reset.
     */
    public void setReloadable(String parameter, String value) throws SQLException {
        if (!PARAMETER.matcher(parameter).matches() || value != null && !VALUE.matcher(value).matches()) {
            throw new IllegalArgumentException("not a plain parameter setting: " + parameter + " = " + value);
        }
        try (Connection c = server.getPostgresDatabase().getConnection(); Statement st = c.createStatement()) {
            st.execute(value == null ? "ALTER SYSTEM RESET " + parameter : "ALTER SYSTEM SET " + parameter + " = '" + value + "'");
            st.execute("SELECT pg_reload_conf()");
        }
    }

    public boolean isRunning() {
        return server != null;
    }

    /** Stops the server and deletes its data directory; again, it does nothing. */
    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        try {
            Runtime.getRuntime().removeShutdownHook(onExit);
        } catch (IllegalStateException exiting) {
            // called from a shutdown hook: ours may be running too, and waits for this one on the lock
        }
        try {
            stopOrRelease();
        } finally {
            deleteRecursively(dataDir);
        }
    }

    private void closeQuietly() {
        try {
            close();
        } catch (IOException | RuntimeException e) {
            System.err.println("Local PostgreSQL: could not remove " + dataDir + ": " + e);
        }
    }

    /**
     * A fast stop; or, when the postmaster is gone already (Ctrl+C in a terminal signals the whole process group, so it
     * may have stopped by itself), only the handle's release, without the error a stop of a missing server logs.
     */
    private void stopOrRelease() throws IOException {
        if (server == null) {
            return;
        }
        if (postmasterAlive()) {
            stop();
        } else {
            releaseCrashed();
        }
    }

    private boolean postmasterAlive() {
        try {
            return ProcessHandle.of(pid()).map(ProcessHandle::isAlive).orElse(false);
        } catch (IOException | RuntimeException noPidFile) {
            return false;
        }
    }

    /**
     * Deletes the directory and everything in it, tolerating files that vanish while it is walked (a postmaster still
     * exiting removes its own); a directory that something wrote into meanwhile is walked again, a few times at most.
     */
    private static void deleteRecursively(Path dir) throws IOException {
        IOException last = null;
        for (int attempt = 0; attempt < 5 && Files.exists(dir); attempt++) {
            try {
                Files.walkFileTree(dir, new SimpleFileVisitor<>() {
                    @Override
                    public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) throws IOException {
                        Files.deleteIfExists(file);
                        return FileVisitResult.CONTINUE;
                    }

                    @Override
                    public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
                        if (e instanceof NoSuchFileException) {
                            return FileVisitResult.CONTINUE;
                        }
                        throw e;
                    }

                    @Override
                    public FileVisitResult postVisitDirectory(Path directory, IOException e) throws IOException {
                        if (e != null && !(e instanceof NoSuchFileException)) {
                            throw e;
                        }
                        Files.deleteIfExists(directory);
                        return FileVisitResult.CONTINUE;
                    }
                });
                last = null;
            } catch (NoSuchFileException gone) {
                last = null; // the directory itself went while it was walked
            } catch (DirectoryNotEmptyException written) {
                last = written;
            }
        }
        if (last != null) {
            throw last;
        }
    }
}
