package dev.ledgerline.transfers.packaged;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.security.DigestOutputStream;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.Deflater;
import java.util.zip.GZIPOutputStream;

/**
 * A stand-in for the image's real base (Eclipse Temurin's JRE 17 on Ubuntu), which cannot be pulled here: the build
 * machines reach no registry of the internet. One layer: a JRE that {@code jlink} makes from this machine's JDK 17,
 * at {@code /opt/java/openjdk} where Temurin's images keep theirs, the host's shared libraries it links (as {@code ldd}
 * lists them) and the rest of glibc's at the same paths, and a {@code /tmp}; a config with Temurin's {@code PATH}, {@code JAVA_HOME} and
 * {@code JAVA_VERSION}. Enough for the image built on it to run under {@code chroot}; not Ubuntu, not Temurin's build
 * of Java, no shell.
 */
final class StandInBase {

    /** The rest of glibc, beside {@code libc.so.6}: every Ubuntu base carries it whatever links it. */
    private static final List<String> GLIBC = List.of("libdl.so.2", "libm.so.6", "libpthread.so.0", "librt.so.1",
            "libresolv.so.2");

    /** Where Temurin's images keep the JRE, and so where {@code java} on the image's {@code PATH} is. */
    static final String JAVA_HOME = "/opt/java/openjdk";
    static final String PATH = JAVA_HOME + "/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    /** The modules of the stand-in JRE: Java SE and the JDK modules a Temurin JRE carries that the service may use. */
    static final String MODULES = "java.se,jdk.unsupported,jdk.crypto.ec,jdk.management,jdk.naming.dns,jdk.zipfs,"
            + "jdk.charsets,jdk.localedata,jdk.net";

    private static final Pattern LIBRARY = Pattern.compile("(?:=>\\s*)?(/\\S+)\\s+\\(0x[0-9a-f]+\\)");

    /** What was pushed: the reference Jib is given, and the one layer's digest (compressed) and diff id (not). */
    record Pushed(String reference, String layerDigest, String diffId, long layerSize) {
    }

    private StandInBase() {
    }

    /**
     * Makes the stand-in in {@code work} and pushes it to {@code registry} as {@code stand-in/<repository>:<tag>} of
     * the configured base {@code base} (e.g. {@code eclipse-temurin:17.0.15_6-jre-noble}).
     */
    static Pushed push(LocalRegistry registry, String base, Path work) throws Exception {
        Path javaHome = Path.of(System.getProperty("java.home"));
        Path jre = work.resolve("jre");
        run(work.resolve("jlink.log"), javaHome.resolve("bin/jlink").toString(), "--add-modules", MODULES,
                "--strip-debug", "--no-man-pages", "--no-header-files", "--output", jre.toString());

        List<Tar.Entry> entries = new ArrayList<>();
        for (String dir : List.of("opt", "opt/java")) {
            entries.add(directory(dir, 0755));
        }
        try (Stream<Path> tree = Files.walk(jre)) {
            for (Path path : tree.toList()) {
                String inImage = (JAVA_HOME + (path.equals(jre) ? "" : "/" + jre.relativize(path))).substring(1);
                if (Files.isSymbolicLink(path)) {
                    entries.add(new Tar.Entry(inImage, Tar.SYMLINK, 0777, 0, 0, Files.readSymbolicLink(path).toString(), new byte[0]));
                } else if (Files.isDirectory(path)) {
                    entries.add(directory(inImage, 0755));
                } else {
                    entries.add(new Tar.Entry(inImage, Tar.FILE, mode(path), 0, 0, "", Files.readAllBytes(path)));
                }
            }
        }
        Set<String> libraryDirectories = new TreeSet<>();
        List<Tar.Entry> libraries = new ArrayList<>();
        for (Path library : linkedLibraries(jre, work.resolve("ldd.log"))) {
            String inImage = library.toString().substring(1);
            for (Path parent = Path.of(inImage).getParent(); parent != null; parent = parent.getParent()) {
                libraryDirectories.add(parent.toString());
            }
            libraries.add(new Tar.Entry(inImage, Tar.FILE, 0755, 0, 0, "", Files.readAllBytes(library)));
        }
        libraryDirectories.forEach(dir -> entries.add(directory(dir, 0755)));
        entries.addAll(libraries);
        entries.add(directory("tmp", 01777));

        Path layer = work.resolve("layer.tar.gz");
        MessageDigest uncompressed = MessageDigest.getInstance("SHA-256");
        try (OutputStream file = new BufferedOutputStream(Files.newOutputStream(layer), 1 << 16);
             GZIPOutputStream gzip = new GZIPOutputStream(file, 1 << 16) {
                 {
                     def.setLevel(Deflater.BEST_SPEED);
                 }
             };
             DigestOutputStream tar = new DigestOutputStream(gzip, uncompressed)) {
            Tar.write(entries, 0, tar);
        }
        String diffId = "sha256:" + HexFormat.of().formatHex(uncompressed.digest());

        String named = base.replaceFirst("@.*$", "");
        String repository = "stand-in/" + named.substring(0, named.lastIndexOf(':')).replaceFirst("^.*/", "");
        String tag = named.substring(named.lastIndexOf(':') + 1);
        String layerDigest = registry.pushBlob(repository, layer);

        ObjectNode config = LocalRegistry.JSON.createObjectNode();
        config.put("architecture", "amd64").put("os", "linux").put("created", Instant.EPOCH.toString());
        ArrayNode env = config.putObject("config").putArray("Env");
        env.add("PATH=" + PATH).add("JAVA_HOME=" + JAVA_HOME).add("JAVA_VERSION=jdk-" + Runtime.version());
        ObjectNode rootfs = config.putObject("rootfs").put("type", "layers");
        rootfs.putArray("diff_ids").add(diffId);
        config.putArray("history").addObject().put("created", Instant.EPOCH.toString())
                .put("created_by", "ContainerImageIT: a stand-in for " + base + ", jlink of this machine's Java "
                        + Runtime.version() + " at " + JAVA_HOME + " and the libraries it links");
        Path configFile = work.resolve("config.json");
        Files.write(configFile, LocalRegistry.JSON.writeValueAsBytes(config));
        String configDigest = registry.pushBlob(repository, configFile);

        ObjectNode manifest = LocalRegistry.JSON.createObjectNode();
        manifest.put("schemaVersion", 2).put("mediaType", LocalRegistry.DOCKER_MANIFEST);
        manifest.putObject("config").put("mediaType", LocalRegistry.DOCKER_CONFIG).put("size", Files.size(configFile))
                .put("digest", configDigest);
        manifest.putArray("layers").addObject().put("mediaType", LocalRegistry.DOCKER_LAYER).put("size", Files.size(layer))
                .put("digest", layerDigest);
        registry.pushManifest(repository, tag, LocalRegistry.DOCKER_MANIFEST, LocalRegistry.JSON.writeValueAsBytes(manifest));
        return new Pushed(registry.host + "/" + repository + ":" + tag, layerDigest, diffId, Files.size(layer));
    }

    /** The host's shared libraries that the JRE's launcher and libraries link, by the paths {@code ldd} resolves. */
    private static Set<Path> linkedLibraries(Path jre, Path log) throws Exception {
        List<String> command = new ArrayList<>(List.of("ldd", jre.resolve("bin/java").toString()));
        try (Stream<Path> tree = Files.walk(jre)) {
            tree.filter(p -> p.getFileName().toString().endsWith(".so")).map(Path::toString).sorted().forEach(command::add);
        }
        run(log, command.toArray(String[]::new));
        Set<Path> libraries = new TreeSet<>();
        for (String line : Files.readAllLines(log, StandardCharsets.UTF_8)) {
            Matcher library = LIBRARY.matcher(line);
            if (library.find()) {
                Path path = Path.of(library.group(1));
                if (!path.startsWith(jre) && !path.normalize().startsWith(jre)) {
                    libraries.add(path);
                }
            }
        }
        Path libc = libraries.stream().filter(p -> p.getFileName().toString().startsWith("libc.so")).findFirst()
                .orElseThrow(() -> new IllegalStateException("ldd named no libc for the stand-in JRE; see " + log));
        // the real base is Ubuntu, whose glibc is whole: native libraries the package ships (Netty's epoll) link parts
        // of it that the JRE itself does not (libdl.so.2)
        for (String part : GLIBC) {
            Path library = libc.resolveSibling(part);
            if (Files.exists(library)) {
                libraries.add(library);
            }
        }
        return libraries;
    }

    private static Tar.Entry directory(String path, int mode) {
        return new Tar.Entry(path, Tar.DIRECTORY, mode, 0, 0, "", new byte[0]);
    }

    private static int mode(Path file) throws IOException {
        Set<PosixFilePermission> permissions = Files.getPosixFilePermissions(file, LinkOption.NOFOLLOW_LINKS);
        return permissions.contains(PosixFilePermission.OWNER_EXECUTE) ? 0755 : 0644;
    }

    private static void run(Path log, String... command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!process.waitFor(2, TimeUnit.MINUTES)) {
            process.destroyForcibly();
            throw new IllegalStateException(command[0] + " did not finish in 2 minutes; see " + log);
        }
        if (process.exitValue() != 0 && !command[0].equals("ldd")) {
            throw new IllegalStateException(String.join(" ", command) + " exited " + process.exitValue() + ": "
                    + Files.readString(log));
        }
    }
}
