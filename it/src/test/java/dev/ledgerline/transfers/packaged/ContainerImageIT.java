package dev.ledgerline.transfers.packaged;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ledgerline.devstack.LocalStack;
import dev.ledgerline.transfers.support.Issuer;
import dev.ledgerline.transfers.support.Management;
import dev.ledgerline.transfers.support.Repo;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The service's image, built and pushed by the project's own command and then used as a cluster would use it.
 *
 * <p>A real registry (Debian's {@code docker-registry}, on a loopback port) first receives a <b>stand-in base</b>
 * ({@link StandInBase}): the configured base, Eclipse Temurin's JRE 17, cannot be pulled here because the build
 * machines reach no registry of the internet, so a JRE made with {@code jlink} from this machine's JDK 17 takes its
 * place, where Temurin keeps its own, with Temurin's {@code PATH} and {@code JAVA_HOME}. Then README "Deploying" step 1
 * runs as written, with only this registry, the stand-in as the base, {@code -o} and Jib's caches added, in a copy of
 * the repository's files: the other failsafe fork's ITs read {@code service/target} meanwhile, and a build there would
 * rewrite it under them (a test here checks it did not change). The image is then pulled back over the registry API
 * under the name the build's manifests give: its user, entry point, working directory, ports, and layers (the base's
 * first, then exactly the fast-jar's files, byte for byte, owned by root and not writable by the user). Last, its layers
 * are unpacked into a root filesystem and its own entry point runs there, as its user, with that root read-only and
 * {@code /tmp} the only writable place, as the manifests' pod runs it, against a local PostgreSQL and Redis, and takes a
 * transfer.
 *
 * <p>What it cannot show: Temurin's real image (its Ubuntu, its Java build) under the service; a Docker daemon or
 * another container runtime (the run is {@code unshare}'s chroot, mount namespace and uid change, no cgroup limits or
 * network namespace); a Kubernetes cluster pulling the image.
 */
class ContainerImageIT {

    /** The repository the service's image is pushed to, under the registry: quarkus.container-image.group/name. */
    private static final String REPOSITORY = "ledgerline/ledgerline-transfers";
    /** Where the image keeps the fast-jar (quarkus.jib.working-directory), as a layer path. */
    private static final String APP_DIR = "deployments";
    /** The fast-jar's file that lists its dependencies for tooling; nothing runs it, and Jib leaves it out. */
    private static final String DEPENDENCY_LIST = "quarkus-app-dependencies.txt";
    private static final Duration BUILD_LIMIT = Duration.ofMinutes(10);

    @TempDir
    static Path work;

    private static Properties settings;
    private static LocalRegistry registry;
    private static StandInBase.Pushed base;
    private static Path copy;
    private static Path built;
    private static Map<String, String> sharedBefore;
    private static Map<String, String> sharedAfter;
    private static Manifests manifests;
    private static String image;
    private static LocalRegistry.Pulled pulled;
    private static JsonNode config;
    private static List<List<Tar.Entry>> layers;

    @BeforeAll
    static void buildPushAndPull() throws Exception {
        settings = new Properties();
        try (InputStream in = Files.newInputStream(Repo.file("service/src/main/resources/application.properties"))) {
            settings.load(in);
        }
        registry = LocalRegistry.start(Files.createDirectories(work.resolve("registry")));

        long started = System.nanoTime();
        base = StandInBase.push(registry, settings.getProperty("quarkus.jib.base-jvm-image"), Files.createDirectories(work.resolve("base")));
        long baseTook = System.nanoTime() - started;

        copy = copySources(Repo.file(""), work.resolve("src"));
        built = copy.resolve("service/target");
        sharedBefore = fingerprint(PackagedJar.SERVICE_TARGET);
        started = System.nanoTime();
        build(documentedBuild());
        long buildTook = System.nanoTime() - started;
        sharedAfter = fingerprint(PackagedJar.SERVICE_TARGET);
        System.out.printf("ContainerImageIT: the stand-in base (jlink, layer, push) took %.1f s, the documented build and push %.1f s%n",
                baseTook / 1e9, buildTook / 1e9);

        manifests = Manifests.read(built.resolve("kubernetes/kubernetes.yml"));
        image = Manifests.container(manifests.resource("Deployment", Manifests.NAME), Manifests.NAME).path("image").asText();
        assertTrue(image.startsWith(registry.host + "/" + REPOSITORY + ":"), "the manifests name an image of this registry: " + image);
        pulled = registry.manifest(REPOSITORY, image.substring(image.lastIndexOf(':') + 1));
        config = LocalRegistry.JSON.readTree(Files.readAllBytes(registry.blob(REPOSITORY,
                pulled.json().path("config").path("digest").asText(), work.resolve("config.json"))));
        layers = new ArrayList<>();
        int index = 0;
        for (JsonNode layer : pulled.json().path("layers")) {
            Path file = registry.blob(REPOSITORY, layer.path("digest").asText(), work.resolve("layer-" + index++ + ".tar.gz"));
            try (InputStream in = new GZIPInputStream(Files.newInputStream(file), 1 << 16)) {
                layers.add(Tar.read(in));
            }
        }
    }

    @AfterAll
    static void stopRegistry() {
        if (registry != null) {
            registry.close();
        }
    }

    @Test
    void theBaseIsPinnedToAFullJavaVersionOfTheReleaseTheServiceIsCompiledFor() throws IOException {
        String configured = settings.getProperty("quarkus.jib.base-jvm-image", "");
        assertFalse(configured.contains("${"), "a base chosen at build time is not pinned: " + configured);
        Matcher tag = Pattern.compile("^[a-z0-9./_-]+:(\\d+)\\.(\\d+)\\.(\\d+)[^:@\\s]*(@sha256:[0-9a-f]{64})?$").matcher(configured);
        assertTrue(tag.matches(), "the base names a full version (major.minor.patch), not a moving tag: " + configured);
        String release = Pattern.compile("<maven.compiler.release>(\\d+)</maven.compiler.release>")
                .matcher(Files.readString(Repo.file("pom.xml"))).results().findFirst().orElseThrow().group(1);
        assertEquals(release, tag.group(1), "the base's Java is the release the service is compiled for");
        assertEquals(release, Integer.toString(Runtime.version().feature()), "the stand-in base is made from that Java too");
    }

    @Test
    void theBuildPushedTheImageItsManifestsNameAndReadmeFindsThatName() throws Exception {
        String version = Pattern.compile("<artifactId>ledgerline-parent</artifactId>\\s*<version>([^<]+)</version>")
                .matcher(Files.readString(Repo.file("pom.xml"))).results().findFirst().orElseThrow().group(1);
        assertEquals(registry.host + "/" + REPOSITORY + ":" + version, image, "the registry given, the group and name, the release");
        assertEquals(image, Manifests.container(manifests.resource("Job", Manifests.MIGRATION_JOB), Manifests.MIGRATION_CONTAINER)
                .path("image").asText(), "the migration Job runs the image pushed, not the default registry's");
        assertEquals(Files.readString(built.resolve("jib-image.digest")).strip(), pulled.digest(),
                "the registry holds, under the manifests' name, the image the build reported");

        Matcher imageLine = Pattern.compile("(?m)^(IMAGE=\\$\\(.*\\))").matcher(Files.readString(Repo.file("README.md")));
        assertTrue(imageLine.find(), "README shows how to read the pushed image's name");
        Process bash = new ProcessBuilder("bash", "-c", imageLine.group(1) + "; printf %s \"$IMAGE\"").directory(copy.toFile()).start();
        assertTrue(bash.waitFor(10, TimeUnit.SECONDS));
        assertEquals(image, new String(bash.getInputStream().readAllBytes()).strip());
    }

    @Test
    void theDocumentedBuildLeftTheBuildOutputTheOtherTestsReadAlone() {
        assertFalse(sharedBefore.isEmpty(), "package the application first: " + PackagedJar.APP);
        assertEquals(sharedBefore, sharedAfter, "the image's build rewrote " + PackagedJar.SERVICE_TARGET + " under the other ITs");
    }

    @Test
    void itRunsTheFastJarAsANumericNonRootUserFromItsWorkingDirectory() {
        JsonNode container = config.path("config");
        String user = container.path("User").asText();
        assertTrue(user.matches("\\d+(:\\d+)?"), "runAsNonRoot can only verify a numeric user: " + user);
        assertNotEquals(0, Integer.parseInt(user.split(":")[0]), "not root");
        assertEquals(settings.getProperty("quarkus.jib.user"), user);
        assertEquals("/" + APP_DIR, container.path("WorkingDir").asText());
        assertEquals(List.of("java", "-Djava.util.logging.manager=org.jboss.logmanager.LogManager", "-jar", "quarkus-run.jar"),
                strings(container.path("Entrypoint")), "java from the base's PATH runs the fast-jar in the working directory");
        assertTrue(container.path("Cmd").isNull() || container.path("Cmd").isMissingNode() || container.path("Cmd").isEmpty(),
                "nothing is appended to the entry point: " + container.path("Cmd"));
        Set<String> ports = new TreeSet<>();
        container.path("ExposedPorts").fieldNames().forEachRemaining(ports::add);
        assertEquals(Set.of("8080/tcp", "9000/tcp"), ports, "the API and the management interface");
        List<String> env = strings(container.path("Env"));
        assertTrue(env.contains("PATH=" + StandInBase.PATH), "the base's PATH finds java: " + env);
        assertTrue(env.contains("JAVA_HOME=" + StandInBase.JAVA_HOME), env.toString());
        assertTrue(env.contains("LANG=C.UTF-8"), env.toString());
    }

    @Test
    void itsLayersAreTheBaseThenExactlyTheFastJarOwnedByRootAndReadOnlyForItsUser() throws IOException {
        JsonNode manifestLayers = pulled.json().path("layers");
        assertEquals(base.layerDigest(), manifestLayers.path(0).path("digest").asText(), "the base's layer comes first, unchanged");
        List<String> diffIds = strings(config.path("rootfs").path("diff_ids"));
        assertEquals(manifestLayers.size(), diffIds.size());
        assertEquals(base.diffId(), diffIds.get(0));
        assertTrue(layers.size() >= 2, "the fast-jar is in layers of its own: " + layers.size());

        Map<String, String> inImage = new TreeMap<>();
        for (List<Tar.Entry> layer : layers.subList(1, layers.size())) {
            for (Tar.Entry entry : layer) {
                assertTrue(entry.path().equals(APP_DIR) || entry.path().startsWith(APP_DIR + "/"),
                        "the image adds nothing but the fast-jar: " + entry.path());
                assertEquals(0, entry.uid(), entry.path() + " is root's");
                assertEquals(0, entry.gid(), entry.path() + " is root's group's");
                assertEquals(0, entry.mode() & 07022, entry.path() + " is writable only by root, and no set-id bit: "
                        + Integer.toOctalString(entry.mode()));
                assertTrue(entry.isFile() || entry.isDirectory(), entry.path() + " is a plain file or directory");
                if (entry.isFile()) {
                    assertNull(inImage.put(entry.path().substring(APP_DIR.length() + 1), LocalRegistry.digest(entry.content())),
                            entry.path() + " is in one layer only");
                }
            }
        }
        Map<String, String> fastJar = new TreeMap<>();
        Path app = built.resolve("quarkus-app");
        try (Stream<Path> files = Files.walk(app)) {
            for (Path file : files.filter(Files::isRegularFile).toList()) {
                String relative = app.relativize(file).toString();
                if (!relative.equals(DEPENDENCY_LIST)) {
                    fastJar.put(relative, LocalRegistry.digest(file));
                }
            }
        }
        assertTrue(fastJar.containsKey("quarkus-run.jar") && fastJar.keySet().stream().anyMatch(f -> f.startsWith("lib/"))
                && fastJar.keySet().stream().anyMatch(f -> f.startsWith("app/"))
                && fastJar.keySet().stream().anyMatch(f -> f.startsWith("quarkus/")), fastJar.keySet().toString());
        assertEquals(fastJar, inImage, "the image holds the build's fast-jar, file for file and byte for byte");
    }

    /**
     * The image as a node runs it: its layers unpacked in order, its own entry point, working directory, environment
     * and user (uid 185 and, as a runtime gives a user the image's {@code /etc/passwd} does not know, group 0), the
     * root filesystem read-only and {@code /tmp} a fresh tmpfs (the manifests' {@code readOnlyRootFilesystem} and
     * {@code emptyDir}), with {@code /proc}, the four {@code /dev} nodes a JVM reads and {@code /etc/hosts} mounted as a
     * runtime mounts them, and the issuer's key mounted read-only as a Secret would be. The deployment's settings come
     * as variables: the manifests' own, then those every packaged IT gives a local PostgreSQL, Redis and issuer.
     *
     * <p>Mounting, changing root and changing user need root, which the build machines and CI run the tests as. On a
     * machine where they run as another user this one test is skipped, with that reason in the report; everything
     * above it needs no root and still runs.
     */
    @Test
    void itsOwnEntryPointStartsAsItsUserWithARootItCannotWriteAndTakesATransfer() throws Exception {
        Assumptions.assumeTrue((Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid") == 0,
                "running the image needs root (mount namespace, chroot, uid change); these tests run as another user");
        Path rootfs = Files.createDirectories(work.resolve("rootfs"));
        for (List<Tar.Entry> layer : layers) {
            unpack(layer, rootfs);
        }
        JsonNode container = config.path("config");
        String keyInImage = "/etc/ledgerline/jwt/publicKey.pem";
        for (String mountPoint : List.of("/proc", "/tmp")) {
            Files.createDirectories(rootfs.resolve(mountPoint.substring(1)));
        }
        for (String mountPoint : List.of("/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/etc/hosts", keyInImage)) {
            Path file = rootfs.resolve(mountPoint.substring(1));
            Files.createDirectories(file.getParent());
            if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
                Files.createFile(file);
            }
        }
        String hostname = Files.readString(Path.of("/proc/sys/kernel/hostname")).strip();
        Path hosts = Files.writeString(work.resolve("hosts"), "127.0.0.1 localhost " + hostname + "\n::1 localhost ip6-localhost\n");

        String[] user = container.path("User").asText().split(":");
        String script = """
                root=$1 hosts=$2 key=$3 key_at=$4 wd=$5 uid=$6 gid=$7; shift 7
                mount --bind "$root" "$root"
                mount -t proc proc "$root/proc"
                for node in null zero random urandom; do mount --bind "/dev/$node" "$root/dev/$node"; done
                mount --bind -o ro "$hosts" "$root/etc/hosts"
                mount --bind -o ro "$key" "$root$key_at"
                mount -t tmpfs -o mode=1777,size=256m tmpfs "$root/tmp"
                mount -o remount,bind,ro "$root"
                exec unshare --root="$root" --wd="$wd" --setgid "$gid" --setuid "$uid" -- "$@"
                """;
        try (LocalStack stack = LocalStack.start(); Issuer issuer = Issuer.fresh()) {
            Files.setPosixFilePermissions(issuer.publicKey(), PosixFilePermissions.fromString("rw-r--r--"));
            int port = PackagedJar.freePort();
            Map<String, String> env = new LinkedHashMap<>();
            for (String variable : strings(container.path("Env"))) {
                env.put(variable.substring(0, variable.indexOf('=')), variable.substring(variable.indexOf('=') + 1));
            }
            env.put("HOME", "/");
            env.put("HOSTNAME", hostname);
            env.putAll(Manifests.literalEnv(Manifests.container(manifests.resource("Deployment", Manifests.NAME), Manifests.NAME)));
            env.putAll(PackagedService.env(stack, port, Path.of(keyInImage)));

            List<String> command = new ArrayList<>(List.of("unshare", "--mount", "--propagation", "private", "sh", "-ec", script, "sh",
                    rootfs.toString(), hosts.toString(), issuer.publicKey().toString(), keyInImage,
                    container.path("WorkingDir").asText(), user[0], user.length > 1 ? user[1] : "0"));
            command.addAll(strings(container.path("Entrypoint")));
            command.addAll(strings(container.path("Cmd")));
            Path log = work.resolve("service.log");
            ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
            builder.environment().clear();
            builder.environment().putAll(env);
            Process service = builder.start();
            try {
                int management = Integer.parseInt(env.get(Management.PORT_VARIABLE));
                Awaitility.await("the image's service is ready").atMost(Duration.ofSeconds(90))
                        .pollInterval(Duration.ofMillis(250)).ignoreExceptions()
                        .failFast("the image's service exited; see " + log, () -> !service.isAlive())
                        .until(() -> Management.given(management).get("/q/health/ready").statusCode() == 200);
                // the process that answers is the image's java, in the image's root and working directory, as its user
                Path proc = Path.of("/proc", Long.toString(service.pid()));
                assertEquals(rootfs, Files.readSymbolicLink(proc.resolve("root")));
                assertEquals(rootfs.resolve(container.path("WorkingDir").asText().substring(1)), Files.readSymbolicLink(proc.resolve("cwd")));
                assertEquals(rootfs.resolve(StandInBase.JAVA_HOME.substring(1) + "/bin/java"), Files.readSymbolicLink(proc.resolve("exe")));
                String status = Files.readString(proc.resolve("status"));
                assertTrue(status.contains("\nUid:\t" + user[0] + "\t" + user[0] + "\t" + user[0] + "\t" + user[0] + "\n"), status);
                assertTrue(status.contains("\nGid:\t0\t0\t0\t0\n") && Pattern.compile("\nGroups:[ \t]*\n").matcher(status).find(), status);
                given().port(port).auth().oauth2(issuer.writer("from-the-image"))
                        .contentType("application/json").header("Idempotency-Key", "from-the-image-1")
                        .body("{\"amount\": 5, \"currency\": \"EUR\", \"destination\": {\"iban\": \"DE89370400440532013000\", \"name\": \"Ada\"}}")
                        .post("/v1/transfers").then().statusCode(201);
            } finally {
                service.destroy();
                boolean stopped = service.waitFor(30, TimeUnit.SECONDS);
                if (!stopped) {
                    service.destroyForcibly();
                }
                assertTrue(stopped, "the service stops on SIGTERM within 30 s; see " + log);
            }
            String output = Files.readString(log);
            output.lines().filter(l -> l.contains("started in")).forEach(l -> System.out.println("ContainerImageIT service: " + l));
            assertFalse(output.contains("Read-only file system") || output.contains("Permission denied"),
                    "the service tried to write outside /tmp: " + log);
            // Netty unpacks its epoll library into the tmpfs /tmp and loads it from there, with the root read-only
            List<String> transport = output.lines().filter(l -> l.contains("step=startup I/O on")).toList();
            assertTrue(transport.size() == 1 && transport.get(0).contains("I/O on Netty's native epoll transport"),
                    "the image's service runs on Netty's native epoll transport: " + transport);
        }
    }

    /** README "Deploying" step 1 as written, aimed at this registry and base; offline, Jib's caches in the test's folder. */
    private static List<String> documentedBuild() throws IOException {
        String documented = null;
        for (String line : Files.readString(Repo.file("README.md")).replace("\\\n", " ").split("\n")) {
            if (line.startsWith("./mvnw ") && line.contains("-Dquarkus.container-image.push=true")) {
                documented = line;
            }
        }
        assertTrue(documented != null, "README shows the command that builds and pushes the image");
        List<String> command = new ArrayList<>();
        boolean registryGiven = false;
        for (String word : documented.trim().split("\\s+")) {
            if (word.startsWith("-Dquarkus.container-image.registry=")) {
                word = "-Dquarkus.container-image.registry=" + registry.host;
                registryGiven = true;
            }
            command.add(word);
        }
        assertTrue(registryGiven, "README's command names the registry to push to: " + documented);
        assertEquals("./mvnw", command.get(0));
        command.set(0, copy.resolve("mvnw").toString());
        command.addAll(List.of("-o", "-Dquarkus.container-image.insecure=true",
                "-Dquarkus.jib.base-jvm-image=" + base.reference(),
                "-Dquarkus.jib.base-image-layers-cache=" + work.resolve("jib-cache/base"),
                "-Dquarkus.jib.application-layers-cache=" + work.resolve("jib-cache/application")));
        return command;
    }

    private static void build(List<String> command) throws IOException, InterruptedException {
        Path log = work.resolve("build.log");
        ProcessBuilder builder = new ProcessBuilder(command).directory(copy.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile());
        // nothing of the outer build's (its project directory, its Quarkus settings) may steer this one
        builder.environment().keySet().removeIf(k -> k.startsWith("QUARKUS_")
                || List.of("MAVEN_PROJECTBASEDIR", "MAVEN_BASEDIR", "MAVEN_CMD_LINE_ARGS", "MAVEN_ARGS").contains(k));
        Process maven = builder.start();
        if (!maven.waitFor(BUILD_LIMIT.toSeconds(), TimeUnit.SECONDS)) {
            maven.destroyForcibly();
            throw new AssertionError("the documented build did not finish in " + BUILD_LIMIT + "; see " + log);
        }
        List<String> lines = Files.readAllLines(log);
        if (maven.exitValue() == 0) {
            // what it built and pushed, for the report
            lines.stream().filter(l -> l.contains(" SUCCESS [") || l.contains("Total time") || l.contains("container image"))
                    .forEach(l -> System.out.println("ContainerImageIT build: " + l));
        } else {
            throw new AssertionError("the documented build failed (" + String.join(" ", command) + "):\n"
                    + String.join("\n", lines.subList(Math.max(0, lines.size() - 60), lines.size())));
        }
    }

    /**
     * The repository's files a build reads, copied: everything but build output, installed node modules, git's own
     * files and editors' (git is not asked: a file not yet committed is part of the build too). The TypeScript SDK's
     * generated sources and compiled output ({@code src/generated}, {@code dist}) are build output too, which
     * {@code .ci/verify}'s module tests may be writing while this copies.
     */
    private static Path copySources(Path from, Path to) throws IOException {
        Set<String> skipped = Set.of("target", "node_modules", "dist", "generated", ".git", ".idea", ".vscode");
        try (Stream<Path> paths = Files.walk(from)) {
            for (Path source : (Iterable<Path>) paths.filter(p -> {
                for (Path part : from.relativize(p)) {
                    if (skipped.contains(part.toString())) {
                        return false;
                    }
                }
                String name = p.getFileName().toString();
                return !name.endsWith(".log") && !name.endsWith(".iml");
            })::iterator) {
                Path target = to.resolve(from.relativize(source).toString());
                if (Files.isDirectory(source, LinkOption.NOFOLLOW_LINKS)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(source, target, StandardCopyOption.COPY_ATTRIBUTES, LinkOption.NOFOLLOW_LINKS);
                }
            }
        }
        return to;
    }

    /** Each file of the fast-jar and the manifests under {@code target}: its modification time and digest. */
    private static Map<String, String> fingerprint(Path target) throws IOException {
        Map<String, String> files = new TreeMap<>();
        for (Path root : List.of(target.resolve("quarkus-app"), target.resolve("kubernetes"))) {
            if (!Files.isDirectory(root)) {
                continue;
            }
            try (Stream<Path> paths = Files.walk(root)) {
                for (Path file : paths.filter(Files::isRegularFile).toList()) {
                    files.put(target.relativize(file).toString(), Files.getLastModifiedTime(file) + " " + LocalRegistry.digest(file));
                }
            }
        }
        return files;
    }

    /** A layer's entries onto {@code rootfs}, as a runtime stacks layers (whiteouts included); modes as the layer says. */
    private static void unpack(List<Tar.Entry> layer, Path rootfs) throws IOException {
        List<Map.Entry<Path, Integer>> directories = new ArrayList<>();
        for (Tar.Entry entry : layer) {
            assertFalse(Path.of(entry.path()).normalize().startsWith(".."), "a layer entry outside the root: " + entry.path());
            Path target = rootfs.resolve(entry.path());
            String name = target.getFileName() == null ? "" : target.getFileName().toString();
            if (name.equals(".wh..wh..opq")) {
                clear(target.getParent());
                continue;
            }
            if (name.startsWith(".wh.")) {
                delete(target.resolveSibling(name.substring(4)));
                continue;
            }
            if (entry.isDirectory()) {
                Files.createDirectories(target);
                directories.add(Map.entry(target, entry.mode()));
                continue;
            }
            Files.createDirectories(target.getParent());
            Files.deleteIfExists(target);
            if (entry.isSymlink()) {
                Files.createSymbolicLink(target, Path.of(entry.linkTarget()));
            } else if (entry.isFile()) {
                Files.write(target, entry.content());
                Files.setPosixFilePermissions(target, permissions(entry.mode()));
            }
        }
        Collections.reverse(directories);
        for (Map.Entry<Path, Integer> directory : directories) {
            Files.setPosixFilePermissions(directory.getKey(), permissions(directory.getValue()));
        }
    }

    private static void clear(Path directory) throws IOException {
        if (Files.isDirectory(directory, LinkOption.NOFOLLOW_LINKS)) {
            try (Stream<Path> children = Files.list(directory)) {
                for (Path child : children.toList()) {
                    delete(child);
                }
            }
        }
    }

    private static void delete(Path path) throws IOException {
        if (Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)) {
            clear(path);
        }
        Files.deleteIfExists(path);
    }

    private static Set<PosixFilePermission> permissions(int mode) {
        Set<PosixFilePermission> permissions = EnumSet.noneOf(PosixFilePermission.class);
        PosixFilePermission[] order = {PosixFilePermission.OTHERS_EXECUTE, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_READ,
                PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_READ,
                PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_READ};
        for (int bit = 0; bit < order.length; bit++) {
            if ((mode & (1 << bit)) != 0) {
                permissions.add(order[bit]);
            }
        }
        return permissions;
    }

    private static List<String> strings(JsonNode array) {
        List<String> values = new ArrayList<>();
        array.forEach(value -> values.add(value.asText()));
        return values;
    }
}
