package dev.ledgerline.transfers.packaged;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The Kubernetes manifests quarkus-kubernetes generated during the build ({@code target/kubernetes/kubernetes.yml},
 * docs/operating.md "The manifests"): probes on Quarkus's own health endpoints and port, the deployment's settings taken only
 * from the named Secret and ConfigMap, nothing of the dev profile, resources, a shutdown bound, a Service and a
 * PodDisruptionBudget that select the pods; a hardened pod (not root, read-only root filesystem with /tmp an
 * emptyDir, no privilege escalation, no capabilities), spread across nodes, admitted to only from the ingress and
 * monitoring namespaces, scaled on CPU; the migrations as a Job with credentials of their own; and nothing in
 * them that changes from one build to the next. An IT because the manifests are written by the package phase.
 */
class KubernetesManifestsIT {

    private static final Path MANIFESTS = Manifests.FILE;
    private static final String NAME = Manifests.NAME;

    private static Manifests manifests;
    private static String text;
    private static Properties appConfig;

    @BeforeAll
    static void read() throws IOException {
        manifests = Manifests.read();
        text = manifests.text;
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
        List<String> from = Manifests.envFrom(container);
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

    @Test
    void theServiceAndTheMigrationJobRunHardened() {
        for (JsonNode workload : List.of(deployment(), manifests.resource("Job", Manifests.MIGRATION_JOB))) {
            String name = workload.path("metadata").path("name").asText();
            JsonNode pod = Manifests.podSpec(workload);
            assertTrue(pod.path("securityContext").path("runAsNonRoot").asBoolean(false), name + ": runAsNonRoot");
            JsonNode containers = pod.path("containers");
            assertEquals(1, containers.size(), name + " has one container");
            JsonNode security = containers.get(0).path("securityContext");
            assertTrue(security.path("readOnlyRootFilesystem").asBoolean(false), name + ": readOnlyRootFilesystem");
            assertFalse(security.path("allowPrivilegeEscalation").asBoolean(true), name + ": allowPrivilegeEscalation");
            assertFalse(security.path("privileged").asBoolean(false), name + ": privileged");
            assertEquals("[\"ALL\"]", security.path("capabilities").path("drop").toString(), name + ": capabilities dropped");
            assertTrue(security.path("capabilities").path("add").isMissingNode(), name + ": capabilities added back");

            // the JVM's one writable place (java.io.tmpdir, Vert.x's file cache) is an emptyDir, declared once
            List<String> tmpVolumes = new ArrayList<>();
            String tmpVolume = null;
            for (JsonNode mount : containers.get(0).path("volumeMounts")) {
                if ("/tmp".equals(mount.path("mountPath").asText())) {
                    tmpVolume = mount.path("name").asText();
                    assertFalse(mount.path("readOnly").asBoolean(false), name + ": /tmp is writable");
                }
            }
            assertNotNull(tmpVolume, name + ": nothing mounted on /tmp");
            for (JsonNode volume : pod.path("volumes")) {
                if (volume.path("name").asText().equals(tmpVolume)) {
                    tmpVolumes.add(volume.toString());
                    assertTrue(volume.has("emptyDir"), name + ": /tmp is an emptyDir, not " + volume);
                }
            }
            assertEquals(1, tmpVolumes.size(), name + ": the volume of /tmp is declared exactly once: " + tmpVolumes);
        }
    }

    @Test
    void theNetworkPolicyAdmitsTheApiFromTheIngressAndManagementFromMonitoringOnly() {
        JsonNode policy = resource("NetworkPolicy");
        assertSelects(policy.path("spec").path("podSelector").path("matchLabels"), podLabels(), "NetworkPolicy");
        assertTrue(policy.path("spec").path("policyTypes").toString().contains("\"Ingress\""), "the policy governs ingress");
        int api = portNamed(container(), "http");
        int management = portNamed(container(), "management");
        Map<Integer, String> admittedFrom = new HashMap<>();
        for (JsonNode rule : policy.path("spec").path("ingress")) {
            JsonNode from = rule.path("from");
            assertEquals(1, from.size(), "each rule names its one source: " + rule);
            assertTrue(from.get(0).has("namespaceSelector") && !from.get(0).has("ipBlock"), "a namespace, not addresses: " + rule);
            String namespace = from.get(0).path("namespaceSelector").path("matchLabels").path("kubernetes.io/metadata.name").asText();
            assertFalse(namespace.isBlank(), "a rule admits every namespace: " + rule);
            assertTrue(rule.path("ports").size() > 0, "a rule admits every port: " + rule);
            for (JsonNode port : rule.path("ports")) {
                assertNull(admittedFrom.put(port.path("port").asInt(), namespace), "one source per port: " + rule);
            }
        }
        assertEquals(Map.of(api, "ingress-nginx", management, "monitoring"), admittedFrom);
    }

    @Test
    void theNetworkPolicyLetsOutDnsTheDatabasesOnThePrivateNetworkAndOnlyPublicAddressesBesides() {
        JsonNode policy = resource("NetworkPolicy");
        assertTrue(policy.path("spec").path("policyTypes").toString().contains("\"Egress\""), "the policy governs egress");
        JsonNode egress = policy.path("spec").path("egress");
        assertEquals(3, egress.size(), "DNS, the databases, the public internet: " + egress);
        JsonNode dns = egress.get(0);
        assertEquals("kube-system", dns.path("to").get(0).path("namespaceSelector").path("matchLabels")
                .path("kubernetes.io/metadata.name").asText(), "DNS: " + dns);
        assertEquals(List.of(53, 53), ports(dns), "DNS: " + dns);
        JsonNode databases = egress.get(1);
        assertEquals("10.0.0.0/8", databases.path("to").get(0).path("ipBlock").path("cidr").asText(), "databases: " + databases);
        assertEquals(List.of(5432, 6379, 6380), ports(databases), "only the databases' ports on the private network");
        JsonNode internet = egress.get(2);
        assertTrue(internet.path("ports").isMissingNode(), "webhook endpoints may name any port: " + internet);
        JsonNode block = internet.path("to").get(0).path("ipBlock");
        assertEquals("0.0.0.0/0", block.path("cidr").asText());
        List<String> except = new ArrayList<>();
        block.path("except").forEach(cidr -> except.add(cidr.asText()));
        assertTrue(except.containsAll(List.of("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16",
                "127.0.0.0/8")), "no private, loopback or link-local (cloud metadata) address on any port: " + except);
    }

    private static List<Integer> ports(JsonNode rule) {
        List<Integer> ports = new ArrayList<>();
        rule.path("ports").forEach(port -> ports.add(port.path("port").asInt()));
        return ports;
    }

    @Test
    void thePodsSpreadAcrossNodesAndScaleOnCpu() {
        JsonNode spread = Manifests.podSpec(deployment()).path("topologySpreadConstraints");
        assertEquals(1, spread.size(), "topologySpreadConstraints " + spread);
        assertEquals("kubernetes.io/hostname", spread.get(0).path("topologyKey").asText());
        assertEquals(1, spread.get(0).path("maxSkew").asInt());
        assertSelects(spread.get(0).path("labelSelector").path("matchLabels"), podLabels(), "topology spread");

        JsonNode hpa = resource("HorizontalPodAutoscaler");
        assertEquals("autoscaling/v2", hpa.path("apiVersion").asText());
        JsonNode target = hpa.path("spec").path("scaleTargetRef");
        assertEquals("Deployment", target.path("kind").asText());
        assertEquals(NAME, target.path("name").asText());
        int min = hpa.path("spec").path("minReplicas").asInt();
        int max = hpa.path("spec").path("maxReplicas").asInt();
        // never below what the disruption budget and the Deployment assume
        assertEquals(deployment().path("spec").path("replicas").asInt(), min, "minReplicas");
        assertTrue(max > min, "maxReplicas " + max);
        // about 23 PostgreSQL connections per instance (20 reactive, LISTEN, 2 for Flyway): operating.md asks for
        // max_connections to cover every instance the autoscaler may start; more than 8 would need a pooler first
        assertTrue(max * 23 <= 200, "maxReplicas " + max + " needs more than 200 PostgreSQL connections");
        JsonNode metrics = hpa.path("spec").path("metrics");
        assertEquals(1, metrics.size(), metrics.toString());
        assertEquals("cpu", metrics.get(0).path("resource").path("name").asText());
        assertEquals("Utilization", metrics.get(0).path("resource").path("target").path("type").asText());
        int utilization = metrics.get(0).path("resource").path("target").path("averageUtilization").asInt();
        assertTrue(utilization >= 50 && utilization <= 90, "averageUtilization " + utilization + " % of the request");
    }

    @Test
    void nothingInTheManifestsChangesFromOneBuildToTheNext() {
        for (JsonNode resource : manifests.resources) {
            List<JsonNode> annotated = new ArrayList<>(List.of(resource.path("metadata").path("annotations"),
                    resource.path("spec").path("template").path("metadata").path("annotations")));
            for (JsonNode annotations : annotated) {
                annotations.fieldNames().forEachRemaining(key -> assertTrue(!key.startsWith("app.quarkus.io/")
                                || key.equals("app.quarkus.io/quarkus-version"),
                        resource.path("kind").asText() + " carries " + key + ": a build timestamp or VCS address restarts every pod on apply"));
            }
        }
        String buildDirectory = PackagedJar.SERVICE_TARGET.toAbsolutePath().normalize().getParent().getParent().toString();
        assertFalse(text.contains(buildDirectory), "the manifests name the build machine's path " + buildDirectory);
        assertFalse(text.contains("build-timestamp") || text.contains("vcs-uri") || text.contains("commit-id"), text);
    }

    @Test
    void theMigrationsRunAsAJobWithCredentialsTheServiceNeverSees() {
        JsonNode job = manifests.resource("Job", Manifests.MIGRATION_JOB);
        JsonNode migrate = Manifests.container(job, Manifests.MIGRATION_CONTAINER);
        assertEquals(container().path("image").asText(), migrate.path("image").asText(),
                "the Job runs the image the Deployment runs (service/pom.xml writes the built image into the Job)");
        assertEquals("Never", Manifests.podSpec(job).path("restartPolicy").asText());
        Map<String, String> literal = Manifests.literalEnv(migrate);
        assertEquals("true", literal.get("QUARKUS_INIT_AND_EXIT"), "migrates, then exits: " + literal);
        assertEquals("true", literal.get("QUARKUS_FLYWAY_MIGRATE_AT_START"), literal.toString());
        assertEquals(List.of("configmap:ledgerline-config", "secret:ledgerline-migrations"), Manifests.envFrom(migrate));
        assertFalse(Manifests.envFrom(container()).contains("secret:ledgerline-migrations"),
                "the service's pods must not hold the owner's credentials");
        assertTrue(migrate.path("ports").isMissingNode() && migrate.path("readinessProbe").isMissingNode(),
                "the Job serves nothing: " + migrate);
        // README "Deploying" applies the Job alone, then the rest, by this label: every resource carries one or the other
        String label = "app.kubernetes.io/name";
        assertEquals(Manifests.MIGRATION_JOB, job.path("metadata").path("labels").path(label).asText());
        for (JsonNode resource : manifests.resources) {
            if (resource != job) {
                assertEquals(NAME, resource.path("metadata").path("labels").path(label).asText(),
                        resource.path("kind").asText() + " is not applied with the service");
            }
        }
        // the CAs of the managed servers, mounted read-only where the TLS settings name them, in the Job too
        for (JsonNode container : List.of(container(), migrate)) {
            boolean mounted = false;
            for (JsonNode mount : container.path("volumeMounts")) {
                mounted |= "/etc/ledgerline/ca".equals(mount.path("mountPath").asText()) && mount.path("readOnly").asBoolean();
            }
            assertTrue(mounted, container.path("name").asText() + " has no read-only /etc/ledgerline/ca");
        }
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

    private static JsonNode podLabels() {
        return deployment().path("spec").path("template").path("metadata").path("labels");
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
        return Manifests.container(deployment(), NAME);
    }

    private static JsonNode resource(String kind) {
        return manifests.resource(kind, NAME);
    }
}
