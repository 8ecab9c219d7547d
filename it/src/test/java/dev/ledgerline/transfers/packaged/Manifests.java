package dev.ledgerline.transfers.packaged;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Kubernetes manifests the build generated ({@code target/kubernetes/kubernetes.yml}, docs/operating.md "The
 * manifests"), parsed: for the ITs that check them and for those that run what they say (the migration Job).
 */
final class Manifests {

    static final Path FILE = PackagedJar.SERVICE_TARGET.resolve("kubernetes/kubernetes.yml");
    /** The Deployment, its Service, budget, autoscaler and network policy, and its main container. */
    static final String NAME = "ledgerline-transfers";
    /** The Job that applies the migrations, and its container. */
    static final String MIGRATION_JOB = "ledgerline-transfers-migrate";
    static final String MIGRATION_CONTAINER = "migrate";

    final Path file;
    final String text;
    final List<JsonNode> resources;

    private Manifests(Path file, String text, List<JsonNode> resources) {
        this.file = file;
        this.text = text;
        this.resources = resources;
    }

    static Manifests read() throws IOException {
        return read(FILE);
    }

    /** The manifests of another build than the one the ITs run (ContainerImageIT's own). */
    static Manifests read(Path file) throws IOException {
        assertTrue(Files.isRegularFile(file), "package the application first: " + file);
        String text = Files.readString(file);
        ObjectMapper yaml = new ObjectMapper(new YAMLFactory());
        List<JsonNode> resources = new ArrayList<>();
        try (var parser = yaml.getFactory().createParser(text)) {
            yaml.readValues(parser, JsonNode.class).forEachRemaining(node -> {
                if (node != null && !node.isEmpty()) {
                    resources.add(node);
                }
            });
        }
        return new Manifests(file, text, resources);
    }

    JsonNode resource(String kind, String name) {
        JsonNode found = null;
        for (JsonNode resource : resources) {
            if (kind.equals(resource.path("kind").asText()) && name.equals(resource.path("metadata").path("name").asText())) {
                found = resource;
            }
        }
        assertNotNull(found, "no " + kind + " named " + name + " in " + file);
        return found;
    }

    /** A Deployment's or Job's pod spec. */
    static JsonNode podSpec(JsonNode workload) {
        return workload.path("spec").path("template").path("spec");
    }

    static JsonNode container(JsonNode workload, String name) {
        for (JsonNode container : podSpec(workload).path("containers")) {
            if (name.equals(container.path("name").asText())) {
                return container;
            }
        }
        throw new AssertionError("no container " + name + " in " + workload.path("metadata").path("name").asText());
    }

    /** The migration Job's container, whose settings {@code MigrationJobIT} runs the packaged jar with. */
    static JsonNode migrationContainer() throws IOException {
        return container(read().resource("Job", MIGRATION_JOB), MIGRATION_CONTAINER);
    }

    /** The variables a container sets itself ({@code env} with a {@code value}), in order. */
    static Map<String, String> literalEnv(JsonNode container) {
        Map<String, String> env = new LinkedHashMap<>();
        container.path("env").forEach(variable -> {
            if (variable.has("value")) {
                env.put(variable.path("name").asText(), variable.path("value").asText());
            }
        });
        return env;
    }

    /** What a container takes its variables from: {@code secret:<name>} and {@code configmap:<name>}. */
    static List<String> envFrom(JsonNode container) {
        List<String> from = new ArrayList<>();
        container.path("envFrom").forEach(source -> {
            if (source.has("secretRef")) {
                from.add("secret:" + source.path("secretRef").path("name").asText());
            }
            if (source.has("configMapRef")) {
                from.add("configmap:" + source.path("configMapRef").path("name").asText());
            }
        });
        return from;
    }
}
