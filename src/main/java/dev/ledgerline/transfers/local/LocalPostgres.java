package dev.ledgerline.transfers.local;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;

/**
 * A real PostgreSQL 17 server (zonky's embedded binaries) owned by this JVM. It can be stopped and
 * started again on the same port and data directory, so tests can take the database away and give it
 * back without touching the machine's own PostgreSQL.
 */
public final class LocalPostgres implements AutoCloseable {

    public static final String DATABASE = "postgres";
    public static final String USER = "postgres";

    private final int port;
    private final Path dataDir;
    private EmbeddedPostgres server;

    private LocalPostgres(int port, Path dataDir) {
        this.port = port;
        this.dataDir = dataDir;
    }

    /** Starts a fresh cluster on a free loopback port. */
    public static LocalPostgres start() throws IOException {
        LocalPostgres pg = new LocalPostgres(FreePorts.find(), Files.createTempDirectory("ledgerline-pg-"));
        pg.launch();
        return pg;
    }

    private void launch() throws IOException {
        server = EmbeddedPostgres.builder()
                .setPort(port)
                .setDataDirectory(dataDir)
                .setCleanDataDirectory(false) // the data outlives stop(); close() deletes it
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

    /** Starts the stopped server again on the same port with the same data. */
    public void startAgain() throws IOException {
        if (server == null) {
            launch();
        }
    }

    public boolean isRunning() {
        return server != null;
    }

    @Override
    public void close() throws IOException {
        stop();
        deleteRecursively(dataDir);
    }

    private static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (var paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
