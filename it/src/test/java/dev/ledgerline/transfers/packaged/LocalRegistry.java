package dev.ledgerline.transfers.packaged;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.awaitility.Awaitility;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;

/**
 * A real OCI distribution registry on a loopback port: Debian's {@code docker-registry} ({@code .ci/verify} installs
 * it), storing in a directory of the test's, spoken to over plain HTTP with the registry API (blob uploads, manifest
 * PUT and GET), the way Jib and any container runtime speak to it.
 */
final class LocalRegistry implements AutoCloseable {

    /** The manifest media types a pull accepts: Jib pushes Docker's v2 schema 2 unless told otherwise. */
    static final String DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json";
    static final String OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";
    static final String DOCKER_CONFIG = "application/vnd.docker.container.image.v1+json";
    static final String DOCKER_LAYER = "application/vnd.docker.image.rootfs.diff.tar.gzip";

    static final Path BINARY = Path.of("/usr/bin/docker-registry");
    static final ObjectMapper JSON = new ObjectMapper();

    /** {@code localhost:PORT}, as an image reference names the registry. */
    final String host;
    private final URI base;
    private final Process process;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .followRedirects(HttpClient.Redirect.NORMAL).connectTimeout(Duration.ofSeconds(5)).build();

    private LocalRegistry(int port, Process process) {
        this.host = "localhost:" + port;
        this.base = URI.create("http://127.0.0.1:" + port);
        this.process = process;
    }

    /** Starts the registry on a free port of this fork's window, storing under {@code dir}, and waits until it answers. */
    static LocalRegistry start(Path dir) throws IOException {
        if (!Files.isExecutable(BINARY)) {
            throw new IllegalStateException(BINARY + " is missing: .ci/verify installs it (apt-get install docker-registry)");
        }
        int port = PackagedJar.freePort();
        Path storage = Files.createDirectories(dir.resolve("storage"));
        Path config = dir.resolve("config.yml");
        Files.writeString(config, """
                version: 0.1
                log:
                  level: warn
                  accesslog:
                    disabled: true
                storage:
                  filesystem:
                    rootdirectory: %s
                http:
                  addr: 127.0.0.1:%d
                """.formatted(storage, port));
        Process process = new ProcessBuilder(BINARY.toString(), "serve", config.toString()).redirectErrorStream(true)
                .redirectOutput(dir.resolve("registry.log").toFile()).start();
        LocalRegistry registry = new LocalRegistry(port, process);
        try {
            Awaitility.await("the registry on :" + port + " answers").atMost(Duration.ofSeconds(20))
                    .pollInterval(Duration.ofMillis(100)).ignoreExceptions()
                    .failFast("the registry exited; see " + dir.resolve("registry.log"), () -> !process.isAlive())
                    .until(() -> registry.get("/v2/", "application/json").statusCode() == 200);
        } catch (RuntimeException e) {
            registry.close();
            throw e;
        }
        return registry;
    }

    /** Uploads {@code file} as a blob of {@code repository} in one request; its digest. */
    String pushBlob(String repository, Path file) throws IOException, InterruptedException {
        String digest = digest(file);
        HttpResponse<String> started = http.send(HttpRequest.newBuilder(base.resolve("/v2/" + repository + "/blobs/uploads/"))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        expect(202, started, "start an upload");
        String location = started.headers().firstValue("Location").orElseThrow();
        URI upload = base.resolve(location);
        String separator = upload.getQuery() == null ? "?" : "&";
        HttpResponse<String> put = http.send(HttpRequest.newBuilder(URI.create(upload + separator + "digest=" + digest))
                .header("Content-Type", "application/octet-stream")
                .PUT(HttpRequest.BodyPublishers.ofFile(file)).build(), HttpResponse.BodyHandlers.ofString());
        expect(201, put, "upload " + file.getFileName());
        return digest;
    }

    /** Puts {@code manifest} as {@code repository:tag}; the digest the registry names it by. */
    String pushManifest(String repository, String tag, String mediaType, byte[] manifest) throws IOException, InterruptedException {
        HttpResponse<String> put = http.send(HttpRequest.newBuilder(base.resolve("/v2/" + repository + "/manifests/" + tag))
                .header("Content-Type", mediaType).PUT(HttpRequest.BodyPublishers.ofByteArray(manifest)).build(),
                HttpResponse.BodyHandlers.ofString());
        expect(201, put, "put the manifest of " + repository + ":" + tag);
        return put.headers().firstValue("Docker-Content-Digest").orElseThrow();
    }

    /** What a pull of {@code repository:reference} gets first: the manifest, with its digest. */
    Pulled manifest(String repository, String reference) throws IOException, InterruptedException {
        HttpResponse<byte[]> got = http.send(HttpRequest.newBuilder(base.resolve("/v2/" + repository + "/manifests/" + reference))
                .header("Accept", DOCKER_MANIFEST + ", " + OCI_MANIFEST).GET().build(), HttpResponse.BodyHandlers.ofByteArray());
        if (got.statusCode() != 200) {
            throw new AssertionError("GET the manifest of " + repository + ":" + reference + ": " + got.statusCode()
                    + " " + new String(got.body()));
        }
        return new Pulled(got.headers().firstValue("Docker-Content-Digest").orElseThrow(),
                got.headers().firstValue("Content-Type").orElse(""), JSON.readTree(got.body()), got.body());
    }

    /** The blob {@code digest} of {@code repository}, written to {@code into} and checked against its digest. */
    Path blob(String repository, String digest, Path into) throws IOException, InterruptedException {
        HttpResponse<Path> got = http.send(HttpRequest.newBuilder(base.resolve("/v2/" + repository + "/blobs/" + digest)).GET().build(),
                HttpResponse.BodyHandlers.ofFile(into));
        if (got.statusCode() != 200) {
            throw new AssertionError("GET blob " + digest + " of " + repository + ": " + got.statusCode());
        }
        if (!digest.equals(digest(into))) {
            throw new AssertionError("blob " + digest + " of " + repository + " has another digest: " + digest(into));
        }
        return into;
    }

    private HttpResponse<String> get(String path, String accept) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(base.resolve(path)).header("Accept", accept).timeout(Duration.ofSeconds(2)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static void expect(int status, HttpResponse<String> response, String what) {
        if (response.statusCode() != status) {
            throw new AssertionError(what + ": " + response.statusCode() + " " + response.body());
        }
    }

    /** {@code sha256:<hex>} of a file's bytes, as the registry names blobs. */
    static String digest(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            return digest(in);
        }
    }

    static String digest(InputStream in) throws IOException {
        MessageDigest sha = sha256();
        byte[] buffer = new byte[1 << 16];
        for (int n; (n = in.read(buffer)) > 0; ) {
            sha.update(buffer, 0, n);
        }
        return "sha256:" + HexFormat.of().formatHex(sha.digest());
    }

    static String digest(byte[] bytes) {
        return "sha256:" + HexFormat.of().formatHex(sha256().digest(bytes));
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A manifest as pulled: its digest, media type, parsed body and bytes. */
    record Pulled(String digest, String mediaType, JsonNode json, byte[] bytes) {
    }
}
