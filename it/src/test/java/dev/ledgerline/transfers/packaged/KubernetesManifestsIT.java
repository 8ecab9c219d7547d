package dev.ledgerline.transfers.packaged;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The Kubernetes manifests quarkus-kubernetes generated during the build ({@code target/kubernetes/kubernetes.yml},
 * docs/operating.md "The manifests"): probes on Quarkus's own health endpoints and port, the deployment's settings taken only
 * from the named Secret and ConfigMap, nothing of the dev profile, resources, a shutdown bound, a Service and a
 * PodDisruptionBudget that select the pods. An IT because the manifests are written by the package phase.
 */
class KubernetesManifestsIT {

    private static final Path MANIFESTS = PackagedJar.SERVICE_TARGET.resolve("kubernetes/kubernetes.yml");
    private static final String NAME = "ledgerline-transfers";

    private static String text;
    private static List<JsonNode> resources;
    private static Properties appConfig;

    @BeforeAll
    static void read() throws IOException {
        assertTrue(Files.isRegularFile(MANIFESTS), "package the application first: " + MANIFESTS);
        text = Files.readString(MANIFESTS);
        ObjectMapper yaml = new ObjectMapper(new YAMLFactory());
        resources = new ArrayList<>();
        try (var parser = yaml.getFactory().createParser(text)) {
            yaml.readValues(parser, JsonNode.class).forEachRemaining(node -> {
                if (node != null && !node.isEmpty()) {
                    resources.add(node);
                }
            });
        }
        appConfig = new Properties();
        try (InputStream in = Files.newInputStream(PackagedJar.SERVICE_TARGET.resolve("classes/application.properties"))) {
            appConfig.load(in);
        }
    }

    @Test
    void probesUseQuarkusHealthEndpointsOnThePortQuarkusServesThemOn() {
        JsonNode container = container();
        // a management interface moves /q/* to its own port; the generated probes must follow it
        boolean management = Boolean.parseBoolean(appConfig.getProperty("quarkus.management.enabled", "false"));
        int healthPort = management
                ? Integer.parseInt(appConfig.getProperty("quarkus.management.port", "9000"))
                : Integer.parseInt(appConfig.getProperty("quarkus.http.port", "8080"));
        assertProbe(container, "livenessProbe", "/q/health/live", healthPort);
        assertProbe(container, "readinessProbe", "/q/health/ready", healthPort);
        assertProbe(container, "startupProbe", "/q/health/started", healthPort);
    }

    @Test
    void everyDeploymentSettingComesFromTheNamedSecretAndConfigMap() {
        JsonNode container = container();
        List<String> from = new ArrayList<>();
        container.path("envFrom").forEach(source -> {
            if (source.has("secretRef")) {
                from.add("secret:" + source.path("secretRef").path("name").asText());
            }
            if (source.has("configMapRef")) {
                from.add("configmap:" + source.path("configMapRef").path("name").asText());
            }
        });
        assertTrue(from.contains("secret:ledgerline-secrets"), "envFrom " + from);
        assertTrue(from.contains("configmap:ledgerline-config"), "envFrom " + from);
        // a literal value in the manifest would pin an address, a credential or a key into the image's deployment
        container.path("env").forEach(env -> {
            String name = env.path("name").asText();
            boolean literal = env.has("value");
            assertFalse(literal && (name.startsWith("QUARKUS_") || name.startsWith("MP_") || name.startsWith("LEDGERLINE_")
                    || name.startsWith("SMALLRYE_")), "literal setting in the manifest: " + env);
        });
    }

    @Test
    void nothingOfTheDevProfileIsSet() {
        for (String devOnly : List.of("jwt-public.pem", "jwt-private.pem", "dev-jwt", "/dev/tokens", "sandbox",
                "SANDBOX", "dev-issuer", "QUARKUS_PROFILE", "quarkus.profile", "LAUNCH_DEVMODE")) {
            assertFalse(text.contains(devOnly), "the manifests mention " + devOnly);
        }
    }

    @Test
    void requestsAndLimitsAreSetAndTheShutdownBoundCoversALongPoll() {
        JsonNode resourcesOf = container().path("resources");
        for (String kind : List.of("requests", "limits")) {
            for (String what : List.of("cpu", "memory")) {
                assertFalse(resourcesOf.path(kind).path(what).asText().isBlank(), kind + "." + what + " unset");
            }
        }
        assertTrue(millicores(resourcesOf.path("limits").path("cpu").asText())
                >= millicores(resourcesOf.path("requests").path("cpu").asText()));
        int grace = deployment().path("spec").path("template").path("spec").path("terminationGracePeriodSeconds").asInt(-1);
        // a long poll (Prefer: wait) is held up to 30 s and a pipeline pass up to the provider timeout (5 s)
        assertTrue(grace >= 35, "terminationGracePeriodSeconds " + grace + " cuts off work the instance would finish");
    }

    @Test
    void aServiceAndADisruptionBudgetSelectTheDeploymentsPods() {
        JsonNode podLabels = deployment().path("spec").path("template").path("metadata").path("labels");
        JsonNode service = resource("Service");
        assertSelects(service.path("spec").path("selector"), podLabels, "Service");
        assertTrue(service.path("spec").path("ports").size() > 0, "the Service exposes no port");
        JsonNode budget = resource("PodDisruptionBudget");
        assertSelects(budget.path("spec").path("selector").path("matchLabels"), podLabels, "PodDisruptionBudget");
        int replicas = deployment().path("spec").path("replicas").asInt();
        assertTrue(replicas > 1, "a single replica cannot keep serving through a disruption");
        assertEquals(1, budget.path("spec").path("maxUnavailable").asInt(), "one instance at a time");
    }

    /** Only where a cluster is configured: {@code kubectl apply --dry-run=client} needs an API server to map kinds. */
    @Test
    void kubectlAcceptsTheManifests() throws Exception {
        assumeTrue(run("kubectl", "config", "current-context") == 0, "kubectl or a configured cluster is missing");
        assertEquals(0, run("kubectl", "apply", "--dry-run=client", "--validate=false", "-f", MANIFESTS.toString()));
    }

    private static int run(String... command) throws Exception {
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                return -1;
            }
            return process.exitValue();
        } catch (IOException notInstalled) {
            return -1;
        }
    }

    private static void assertProbe(JsonNode container, String probe, String path, int port) {
        JsonNode get = container.path(probe).path("httpGet");
        assertEquals(path, get.path("path").asText(), probe);
        JsonNode declared = get.path("port");
        int actual = declared.isInt() ? declared.asInt() : portNamed(container, declared.asText());
        assertEquals(port, actual, probe + " port");
    }

    private static int portNamed(JsonNode container, String name) {
        for (JsonNode port : container.path("ports")) {
            if (name.equals(port.path("name").asText())) {
                return port.path("containerPort").asInt();
            }
        }
        throw new AssertionError("no container port named " + name);
    }

    private static void assertSelects(JsonNode selector, JsonNode podLabels, String what) {
        assertTrue(selector.size() > 0, what + " selects nothing");
        selector.fields().forEachRemaining(label -> assertEquals(label.getValue().asText(),
                podLabels.path(label.getKey()).asText(), what + " selector " + label.getKey()));
    }

    private static long millicores(String cpu) {
        return cpu.endsWith("m") ? Long.parseLong(cpu.substring(0, cpu.length() - 1)) : Math.round(Double.parseDouble(cpu) * 1000);
    }

    private static JsonNode deployment() {
        return resource("Deployment");
    }

    private static JsonNode container() {
        for (JsonNode container : deployment().path("spec").path("template").path("spec").path("containers")) {
            if (NAME.equals(container.path("name").asText())) {
                return container;
            }
        }
        throw new AssertionError("no container " + NAME);
    }

    private static JsonNode resource(String kind) {
        JsonNode found = null;
        for (JsonNode resource : resources) {
            if (kind.equals(resource.path("kind").asText()) && NAME.equals(resource.path("metadata").path("name").asText())) {
                found = resource;
            }
        }
        assertNotNull(found, "no " + kind + " named " + NAME + " in " + MANIFESTS);
        return found;
    }
}
