package dev.ledgerline.transfers.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The API contract, {@code openapi.yaml}, read as a tree: its operations, their parameters and
 * responses with local {@code $ref}s resolved. A document that is missing, empty or describes no
 * operation is refused at load time, so no check built on it can pass vacuously.
 */
public final class Contract {

    /**
     * The document the tests compare against: {@code -Dcontract.location=...}, by default the top-level file.
     * Deliberately outside {@code ledgerline.*}: Quarkus refuses unknown system properties under a
     * {@code @ConfigMapping} prefix, so the test application would not start.
     */
    public static final String LOCATION_PROPERTY = "contract.location";

    private static final Set<String> METHODS = Set.of("get", "put", "post", "delete", "patch", "head", "options", "trace");
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static volatile Contract standard;

    /** One documented operation; {@code path} is the template, e.g. {@code /v1/transfers/{id}}. */
    public record Operation(String method, String path, String id, JsonNode node, Pattern matcher) {

        public String describe() {
            return method + " " + path + " (" + id + ")";
        }
    }

    /** A documented parameter: where it goes (path, header, query, cookie) and its name. */
    public record Parameter(String in, String name, boolean required) {

        /** Header names compare case-insensitively; the rest exactly. */
        public String key() {
            return in + ":" + ("header".equals(in) ? name.toLowerCase(Locale.ROOT) : name);
        }
    }

    private final Path source;
    private final JsonNode root;
    private final List<Operation> operations;

    private Contract(Path source, JsonNode root) {
        this.source = source;
        this.root = root;
        this.operations = readOperations(source, root);
    }

    /** The document named by {@value #LOCATION_PROPERTY}, or {@code openapi.yaml} in the working directory. */
    public static Path defaultLocation() {
        return System.getProperty(LOCATION_PROPERTY) != null ? Path.of(System.getProperty(LOCATION_PROPERTY)) : Repo.file("openapi.yaml");
    }

    /** The default document, read once. */
    public static Contract standard() {
        Contract c = standard;
        if (c == null) {
            synchronized (Contract.class) {
                c = standard;
                if (c == null) {
                    c = load(defaultLocation());
                    standard = c;
                }
            }
        }
        return c;
    }

    /** Reads and sanity-checks a document; throws {@link IllegalStateException} with a sentence if it is unusable. */
    public static Contract load(Path source) {
        if (!Files.isRegularFile(source)) {
            throw new IllegalStateException("The API contract " + source.toAbsolutePath() + " does not exist");
        }
        JsonNode root;
        try {
            String text = Files.readString(source);
            if (text.isBlank()) {
                throw new IllegalStateException("The API contract " + source.toAbsolutePath() + " is empty");
            }
            root = YAML.readTree(text);
        } catch (IOException e) {
            throw new UncheckedIOException("The API contract " + source.toAbsolutePath() + " cannot be read", e);
        }
        if (root == null || !root.isObject() || !root.path("openapi").isTextual()) {
            throw new IllegalStateException("The API contract " + source.toAbsolutePath() + " is not an OpenAPI document");
        }
        return new Contract(source, root);
    }

    private static List<Operation> readOperations(Path source, JsonNode root) {
        List<Operation> ops = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> paths = root.path("paths").fields(); paths.hasNext(); ) {
            Map.Entry<String, JsonNode> path = paths.next();
            for (Iterator<Map.Entry<String, JsonNode>> methods = path.getValue().fields(); methods.hasNext(); ) {
                Map.Entry<String, JsonNode> method = methods.next();
                if (METHODS.contains(method.getKey())) {
                    ops.add(new Operation(method.getKey().toUpperCase(Locale.ROOT), path.getKey(),
                            method.getValue().path("operationId").asText(null), method.getValue(), matcher(path.getKey())));
                }
            }
        }
        if (ops.isEmpty()) {
            throw new IllegalStateException("The API contract " + source.toAbsolutePath() + " describes no operation");
        }
        return List.copyOf(ops);
    }

    private static Pattern matcher(String template) {
        StringBuilder regex = new StringBuilder("^");
        for (String part : template.split("(?=\\{)|(?<=\\})")) {
            regex.append(part.startsWith("{") ? "[^/]+" : Pattern.quote(part));
        }
        return Pattern.compile(regex.append('$').toString());
    }

    public Path source() {
        return source;
    }

    public JsonNode root() {
        return root;
    }

    public List<Operation> operations() {
        return operations;
    }

    /** The operation a concrete request path and method fall under; concrete segments win over templates. */
    public Optional<Operation> operation(String method, String concretePath) {
        return operations.stream()
                .filter(op -> op.method().equalsIgnoreCase(method) && op.matcher().matcher(concretePath).matches())
                .min((a, b) -> Long.compare(a.path().chars().filter(c -> c == '{').count(), b.path().chars().filter(c -> c == '{').count()));
    }

    public Operation operationById(String id) {
        return operations.stream().filter(op -> id.equals(op.id())).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no operation " + id + " in " + source));
    }

    /** Path-level and operation-level parameters together (an operation-level one overrides its path-level twin). */
    public Set<Parameter> parameters(Operation op) {
        Map<String, Parameter> byKey = new LinkedHashMap<>();
        for (JsonNode list : List.of(root.path("paths").path(op.path()).path("parameters"), op.node().path("parameters"))) {
            for (JsonNode p : list) {
                JsonNode param = resolve(p);
                Parameter parameter = new Parameter(param.path("in").asText(), param.path("name").asText(),
                        param.path("required").asBoolean(false));
                byKey.put(parameter.key(), parameter);
            }
        }
        return new LinkedHashSet<>(byKey.values());
    }

    /** Status code (as written, e.g. {@code "201"}) to the resolved response object. */
    public Map<String, JsonNode> responses(Operation op) {
        Map<String, JsonNode> responses = new LinkedHashMap<>();
        op.node().path("responses").fields().forEachRemaining(e -> responses.put(e.getKey(), resolve(e.getValue())));
        return responses;
    }

    /** The response headers documented for one status of one operation, lower-cased. */
    public Set<String> responseHeaders(Operation op, int status) {
        JsonNode response = responses(op).get(Integer.toString(status));
        Set<String> names = new LinkedHashSet<>();
        if (response != null) {
            response.path("headers").fieldNames().forEachRemaining(n -> names.add(n.toLowerCase(Locale.ROOT)));
        }
        return names;
    }

    public JsonNode schema(String name) {
        JsonNode schema = root.path("components").path("schemas").path(name);
        if (schema.isMissingNode()) {
            throw new IllegalArgumentException("no schema " + name + " in " + source);
        }
        return schema;
    }

    /** Follows local {@code $ref}s ({@code #/components/...}) until a node without one. */
    public JsonNode resolve(JsonNode node) {
        JsonNode current = node;
        for (int hops = 0; current.has("$ref"); hops++) {
            String ref = current.get("$ref").asText();
            if (!ref.startsWith("#/") || hops > 16) {
                throw new IllegalStateException("unsupported or cyclic $ref " + ref + " in " + source);
            }
            JsonNode target = root.at(ref.substring(1));
            if (target.isMissingNode()) {
                throw new IllegalStateException("dangling $ref " + ref + " in " + source);
            }
            current = target;
        }
        return current;
    }

    /** The schema name a {@code $ref} points at ({@code #/components/schemas/X} gives X), or empty. */
    public static Optional<String> refName(JsonNode node) {
        String ref = node.path("$ref").asText("");
        return ref.startsWith("#/components/schemas/") ? Optional.of(ref.substring("#/components/schemas/".length())) : Optional.empty();
    }
}
