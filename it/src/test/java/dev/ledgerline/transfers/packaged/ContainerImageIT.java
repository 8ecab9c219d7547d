package dev.ledgerline.transfers.packaged;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ledgerline.devstack.LocalStack;
import dev.ledgerline.transfers.support.Issuer;
import dev.ledgerline.transfers.support.Management;
import dev.ledgerline.transfers.support.Repo;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The image definition ({@code service/src/main/docker/Dockerfile.jvm}) against what the build wrote: a pinned base
 * of the Java the service is compiled for, the whole fast-jar and nothing else, a numeric non-root user, an entry
 * point that runs the copied jar, the tag its documented command gives being the image the manifests name, and the
 * jar starting with its code and home read-only and only {@code java.io.tmpdir} writable, as the hardened pod runs
 * it. No image is built here: there is no Docker daemon or registry on the build machines (README "Deploying" lists
 * what was not run).
 */
class ContainerImageIT {

    private static final Path DOCKERFILE = PackagedJar.SERVICE_TARGET.resolveSibling("src/main/docker/Dockerfile.jvm");

    private static List<String> instructions;
    private static String text;

    @BeforeAll
    static void read() throws IOException {
        text = Files.readString(DOCKERFILE);
        instructions = new ArrayList<>();
        for (String line : text.split("\n")) {
            if (!line.isBlank() && !line.startsWith("#")) {
                instructions.add(line.strip());
            }
        }
    }

    @Test
    void theBaseIsPinnedToAFullJavaVersionOfTheReleaseTheServiceIsCompiledFor() throws IOException {
        List<String> from = starting("FROM ");
        assertEquals(1, from.size(), "one stage: " + from);
        String base = from.get(0).substring("FROM ".length()).strip();
        assertFalse(base.contains("${"), "a base chosen at build time is not pinned: " + base);
        Matcher tag = Pattern.compile("^[a-z0-9./_-]+:(\\d+)\\.(\\d+)\\.(\\d+)[^:@\\s]*(@sha256:[0-9a-f]{64})?$").matcher(base);
        assertTrue(tag.matches(), "the base names a full version (major.minor.patch), not a moving tag: " + base);
        String release = Pattern.compile("<maven.compiler.release>(\\d+)</maven.compiler.release>")
                .matcher(Files.readString(Repo.file("pom.xml"))).results().findFirst().orElseThrow().group(1);
        assertEquals(release, tag.group(1), "the base's Java is the release the service is compiled for");
    }

    @Test
    void itRunsAsANumericNonRootUserThatOwnsNothingItRuns() {
        int lastUser = -1;
        for (int i = 0; i < instructions.size(); i++) {
            if (instructions.get(i).startsWith("USER ")) {
                lastUser = i;
            }
        }
        assertTrue(lastUser >= 0, "no USER: the image would run as root");
        String user = imageUser();
        assertTrue(user.matches("\\d+"), "runAsNonRoot can only verify a numeric user: " + user);
        assertNotEquals(0, Integer.parseInt(user));
        for (String instruction : instructions) {
            assertFalse(instruction.startsWith("COPY") && instruction.contains("--chown"), "the service may not rewrite its code: " + instruction);
            assertFalse(instruction.startsWith("RUN") && instruction.contains("chmod"), instruction);
        }
    }

    @Test
    void itCopiesTheWholeFastJarAndRunsTheCopiedJar() throws IOException {
        Set<String> copied = new TreeSet<>();
        for (String copy : starting("COPY ")) {
            String[] parts = copy.split("\\s+");
            String source = parts[1];
            assertTrue(source.startsWith("target/quarkus-app/"), "only the build's output goes in: " + copy);
            String entry = source.substring("target/quarkus-app/".length()).replaceAll("/$", "");
            if (entry.equals("*.jar")) {
                try (Stream<Path> jars = Files.list(PackagedJar.APP)) {
                    jars.filter(p -> p.toString().endsWith(".jar")).forEach(p -> copied.add(p.getFileName().toString()));
                }
            } else {
                assertTrue(Files.exists(PackagedJar.APP.resolve(entry)), "the build writes no " + source);
                copied.add(entry);
            }
        }
        Set<String> written = new TreeSet<>();
        try (Stream<Path> entries = Files.list(PackagedJar.APP)) {
            entries.map(p -> p.getFileName().toString()).filter(name -> !name.endsWith(".txt")).forEach(written::add);
        }
        assertEquals(written, copied, "the image holds the whole fast-jar");
        List<String> entryPoint = starting("ENTRYPOINT ");
        assertEquals(1, entryPoint.size());
        assertTrue(entryPoint.get(0).contains("\"-jar\", \"/deployments/quarkus-run.jar\""), entryPoint.get(0));
        assertTrue(instructions.contains("COPY target/quarkus-app/*.jar /deployments/"), "quarkus-run.jar lands where it is run");
    }

    @Test
    void theDocumentedBuildCommandTagsTheImageTheManifestsName() throws Exception {
        Matcher command = Pattern.compile("#\\s+(IMAGE=\\$\\(.*\\))\\n").matcher(text);
        assertTrue(command.find(), "the Dockerfile documents how its tag is found");
        for (Path documented : List.of(Repo.file("README.md"))) {
            assertTrue(Files.readString(documented).contains(command.group(1).replace("target/", "service/target/")),
                    documented + " tags the image the same way");
        }
        Process bash = new ProcessBuilder("bash", "-c", command.group(1) + "; printf %s \"$IMAGE\"")
                .directory(PackagedJar.SERVICE_TARGET.getParent().toFile()).start();
        assertTrue(bash.waitFor(10, TimeUnit.SECONDS));
        String image = new String(bash.getInputStream().readAllBytes()).strip();
        Manifests manifests = Manifests.read();
        JsonNode deployment = manifests.resource("Deployment", Manifests.NAME);
        assertEquals(Manifests.container(deployment, Manifests.NAME).path("image").asText(), image);
    }

    /**
     * The pod's filesystem as the manifests make it: the code and the user's home read-only, {@code /tmp} the only
     * writable place. A write anywhere else would fail here as it fails in the pod. Run by root (as on the build
     * machines), the jar runs as the image's user through {@code setpriv}, since permissions do not bind root.
     */
    @Test
    void theJarStartsAndServesWithOnlyItsTempDirectoryWritable(@TempDir Path root) throws Exception {
        Path app = root.resolve("deployments");
        Path home = Files.createDirectory(root.resolve("home"));
        Path tmp = Files.createDirectory(root.resolve("tmp"));
        copyTree(PackagedJar.APP, app);
        readOnly(app);
        readOnly(home);
        Files.setPosixFilePermissions(root, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxrwxrwx"));
        try (LocalStack stack = LocalStack.start(); Issuer issuer = Issuer.fresh()) {
            Files.setPosixFilePermissions(issuer.publicKey(), PosixFilePermissions.fromString("rw-r--r--"));
            int port = PackagedJar.freePort();
            Map<String, String> env = PackagedService.env(stack, port, issuer.publicKey());
            List<String> command = new ArrayList<>();
            if ((Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid") == 0) {
                String user = imageUser();
                command.addAll(List.of("setpriv", "--reuid=" + user, "--regid=" + user, "--clear-groups"));
            }
            command.addAll(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Djava.io.tmpdir=" + tmp, "-Duser.home=" + home,
                    "-Djava.util.logging.manager=org.jboss.logmanager.LogManager", "-jar", app.resolve("quarkus-run.jar").toString()));
            ProcessBuilder builder = new ProcessBuilder(command).directory(app.toFile()).redirectErrorStream(true)
                    .redirectOutput(root.resolve("service.log").toFile());
            builder.environment().keySet().removeIf(k -> k.startsWith("QUARKUS_") || k.startsWith("MP_JWT") || k.startsWith("LEDGERLINE_"));
            builder.environment().putAll(env);
            builder.environment().put("HOME", home.toString());
            Process service = builder.start();
            try {
                int management = Integer.parseInt(env.get(Management.PORT_VARIABLE));
                Awaitility.await("the service from a read-only copy is ready").atMost(Duration.ofSeconds(90))
                        .pollInterval(Duration.ofMillis(250)).ignoreExceptions()
                        .failFast("the service exited; see its log", () -> !service.isAlive())
                        .until(() -> Management.given(management).get("/q/health/ready").statusCode() == 200);
                given().port(port).auth().oauth2(issuer.writer("read-only-root"))
                        .contentType("application/json").header("Idempotency-Key", "read-only-root-1")
                        .body("{\"amount\": 5, \"currency\": \"EUR\", \"destination\": {\"iban\": \"DE89370400440532013000\", \"name\": \"Ada\"}}")
                        .post("/v1/transfers").then().statusCode(201);
            } finally {
                service.destroy();
                service.waitFor(20, TimeUnit.SECONDS);
            }
        }
    }

    /** The user of the image's last {@code USER}, without its group. */
    private static String imageUser() {
        List<String> users = starting("USER ");
        assertFalse(users.isEmpty(), "no USER: the image would run as root");
        return users.get(users.size() - 1).substring("USER ".length()).strip().split(":")[0];
    }

    private static List<String> starting(String keyword) {
        return instructions.stream().filter(i -> i.startsWith(keyword)).toList();
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> paths = Files.walk(from)) {
            for (Path source : paths.toList()) {
                Files.copy(source, to.resolve(from.relativize(source).toString()));
            }
        }
    }

    /** Read and execute only, for the test's own user too: directories last, so their files are done first. */
    private static void readOnly(Path tree) throws IOException {
        try (Stream<Path> paths = Files.walk(tree)) {
            List<Path> all = new ArrayList<>(paths.toList());
            Collections.reverse(all);
            for (Path path : all) {
                Files.setPosixFilePermissions(path, PosixFilePermissions.fromString(Files.isDirectory(path) ? "r-xr-xr-x" : "r--r--r--"));
            }
        }
    }
}
