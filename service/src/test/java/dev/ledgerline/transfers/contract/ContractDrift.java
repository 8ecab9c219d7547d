package dev.ledgerline.transfers.contract;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.introspect.BeanPropertyDefinition;
import dev.ledgerline.transfers.support.Contract;
import jakarta.annotation.security.DenyAll;
import jakarta.annotation.security.PermitAll;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.BeanParam;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.CookieParam;
import jakarta.ws.rs.FormParam;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.HttpMethod;
import jakarta.ws.rs.MatrixParam;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Context;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.annotation.Annotation;
import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Parameter;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.time.temporal.Temporal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Compares what the implementation exposes with what {@code openapi.yaml} documents and lists every
 * disagreement as a sentence; an empty list means no drift. Each check takes the {@link Contract} it
 * compares against, so a test can hand it any document.
 *
 * <ul>
 *   <li>{@link #operations}: the JAX-RS resources (found by reflection) against the document's paths,
 *       methods, parameters, request body, media types and required groups — both ways.</li>
 *   <li>{@link #schema}: the JSON properties Jackson writes for a record against a schema's
 *       {@code properties}, {@code required} and types, following nested records through {@code $ref}s.</li>
 *   <li>{@link #enumeration} and {@link #problemTypes}: enum values against the document's lists.</li>
 * </ul>
 */
public final class ContractDrift {

    /** Headers the contract expresses as its security scheme, not as parameters. */
    private static final Set<String> SECURITY_HEADERS = Set.of("header:authorization");

    /** Parameter types the framework injects without an annotation; anything else unannotated is the body. */
    private static final List<String> CONTEXT_TYPE_PREFIXES = List.of("io.vertx.", "jakarta.ws.rs.core.", "org.jboss.resteasy.reactive.",
            "io.quarkus.", "org.eclipse.microprofile.jwt.");

    private ContractDrift() {
    }

    /** One operation the implementation serves, as the drift check sees it. */
    public record Endpoint(String method, String path, Set<String> parameters, boolean body, Set<String> consumes,
                           Set<String> produces, Set<String> groups, String source) {
    }

    // ---------------------------------------------------------------- (a) operations

    /**
     * The endpoints of every concrete {@code @Path} class in {@code basePackage} (found on the class path
     * next to {@code anchor}), except those under one of {@code excludedPrefixes}.
     */
    public static List<Endpoint> implemented(Class<?> anchor, String basePackage, Set<String> excludedPrefixes) {
        List<Endpoint> endpoints = new ArrayList<>();
        for (Class<?> type : classes(anchor, basePackage)) {
            Path classPath = type.getAnnotation(Path.class);
            if (classPath == null || type.isInterface() || Modifier.isAbstract(type.getModifiers())) {
                continue;
            }
            for (Method m : type.getMethods()) {
                String http = httpMethod(m);
                Path methodPath = m.getAnnotation(Path.class);
                if (http == null) {
                    if (methodPath != null) {
                        throw new IllegalStateException("sub-resource locator " + type.getSimpleName() + "." + m.getName()
                                + " is not understood by the drift check; extend ContractDrift.implemented");
                    }
                    continue;
                }
                String path = normalise(classPath.value() + "/" + (methodPath == null ? "" : methodPath.value()));
                if (excludedPrefixes.stream().anyMatch(p -> path.equals(p) || path.startsWith(p + "/"))) {
                    continue;
                }
                endpoints.add(endpoint(type, m, http, path));
            }
        }
        endpoints.sort(Comparator.comparing(Endpoint::path).thenComparing(Endpoint::method));
        return endpoints;
    }

    private static Endpoint endpoint(Class<?> type, Method m, String http, String path) {
        Set<String> params = new TreeSet<>();
        boolean body = false;
        for (Parameter p : m.getParameters()) {
            String key = parameterKey(p, p.getName());
            if (key != null) {
                params.add(key);
            } else if (p.isAnnotationPresent(BeanParam.class) || p.isAnnotationPresent(FormParam.class)
                    || p.isAnnotationPresent(MatrixParam.class)) {
                throw new IllegalStateException(type.getSimpleName() + "." + m.getName() + " uses a parameter kind the drift check "
                        + "does not understand (@BeanParam/@FormParam/@MatrixParam); extend ContractDrift");
            } else if (!p.isAnnotationPresent(Context.class) && !isContextType(p.getType())) {
                body = true;
            }
        }
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            for (Field f : c.getDeclaredFields()) {
                String key = parameterKey(f, f.getName());
                if (key != null) {
                    params.add(key);
                }
            }
        }
        params.removeAll(SECURITY_HEADERS);
        return new Endpoint(http, path, params, body, mediaTypes(m, type, Consumes.class), mediaTypes(m, type, Produces.class),
                groups(m, type), type.getSimpleName() + "." + m.getName());
    }

    /** {@code in:name} for a JAX-RS or RESTEasy Reactive parameter annotation, header names lower-cased; else null. */
    private static String parameterKey(AnnotatedElement element, String defaultName) {
        if (element.getAnnotation(PathParam.class) != null) {
            return "path:" + element.getAnnotation(PathParam.class).value();
        }
        if (element.getAnnotation(HeaderParam.class) != null) {
            return "header:" + element.getAnnotation(HeaderParam.class).value().toLowerCase(Locale.ROOT);
        }
        if (element.getAnnotation(QueryParam.class) != null) {
            return "query:" + element.getAnnotation(QueryParam.class).value();
        }
        if (element.getAnnotation(CookieParam.class) != null) {
            return "cookie:" + element.getAnnotation(CookieParam.class).value();
        }
        for (Annotation a : element.getAnnotations()) {
            String in = switch (a.annotationType().getName()) {
                case "org.jboss.resteasy.reactive.RestPath" -> "path";
                case "org.jboss.resteasy.reactive.RestHeader" -> "header";
                case "org.jboss.resteasy.reactive.RestQuery" -> "query";
                case "org.jboss.resteasy.reactive.RestCookie" -> "cookie";
                default -> null;
            };
            if (in != null) {
                String value = annotationValue(a);
                String name = value.isEmpty() ? defaultName : value;
                return in + ":" + ("header".equals(in) ? name.toLowerCase(Locale.ROOT) : name);
            }
        }
        return null;
    }

    private static String annotationValue(Annotation a) {
        try {
            return (String) a.annotationType().getMethod("value").invoke(a);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    private static boolean isContextType(Class<?> type) {
        return CONTEXT_TYPE_PREFIXES.stream().anyMatch(p -> type.getName().startsWith(p));
    }

    private static String httpMethod(Method m) {
        for (Annotation a : m.getAnnotations()) {
            HttpMethod http = a.annotationType().getAnnotation(HttpMethod.class);
            if (http != null) {
                return http.value();
            }
        }
        return null;
    }

    private static Set<String> mediaTypes(Method m, Class<?> type, Class<? extends Annotation> kind) {
        Annotation a = m.isAnnotationPresent(kind) ? m.getAnnotation(kind) : type.getAnnotation(kind);
        if (a == null) {
            return Set.of();
        }
        String[] values = a instanceof Consumes c ? c.value() : ((Produces) a).value();
        return Arrays.stream(values).flatMap(v -> Arrays.stream(v.split(","))).map(String::strip).collect(Collectors.toCollection(TreeSet::new));
    }

    /** The groups that may call the method; empty for {@code @PermitAll} or no annotation, null for {@code @DenyAll}. */
    private static Set<String> groups(Method m, Class<?> type) {
        for (AnnotatedElement e : List.of(m, type)) {
            if (e.isAnnotationPresent(DenyAll.class)) {
                return null;
            }
            if (e.isAnnotationPresent(PermitAll.class)) {
                return Set.of();
            }
            if (e.isAnnotationPresent(RolesAllowed.class)) {
                return new TreeSet<>(Arrays.asList(e.getAnnotation(RolesAllowed.class).value()));
            }
        }
        return Set.of();
    }

    private static String normalise(String path) {
        String p = ("/" + path).replaceAll("/+", "/").replaceAll("\\{\\s*([^}:\\s]+)\\s*(:[^}]*)?}", "{$1}");
        return p.length() > 1 && p.endsWith("/") ? p.substring(0, p.length() - 1) : p;
    }

    /** The classes compiled into the directory or jar that holds {@code anchor}, below {@code basePackage}. */
    static List<Class<?>> classes(Class<?> anchor, String basePackage) {
        String resource = anchor.getName().replace('.', '/') + ".class";
        URL url = anchor.getClassLoader().getResource(resource);
        if (url == null || !"file".equals(url.getProtocol())) {
            throw new IllegalStateException("cannot list the application classes: " + resource + " is at " + url
                    + ", not in a class directory");
        }
        java.nio.file.Path root;
        try {
            java.nio.file.Path file = java.nio.file.Path.of(url.toURI());
            root = file;
            for (int i = 0; i < anchor.getName().split("\\.").length; i++) {
                root = root.getParent();
            }
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
        java.nio.file.Path base = root.resolve(basePackage.replace('.', '/'));
        List<Class<?>> classes = new ArrayList<>();
        try (Stream<java.nio.file.Path> files = Files.walk(base)) {
            for (java.nio.file.Path f : (Iterable<java.nio.file.Path>) files.filter(f -> f.toString().endsWith(".class"))::iterator) {
                String name = root.relativize(f).toString().replace('/', '.').replaceAll("\\.class$", "");
                classes.add(Class.forName(name, false, anchor.getClassLoader()));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException(e);
        }
        return classes;
    }

    /** Every disagreement between the implemented endpoints and the document's operations. */
    public static List<String> operations(Contract contract, List<Endpoint> implemented) {
        List<String> drift = new ArrayList<>();
        Map<String, Endpoint> byOperation = new TreeMap<>();
        for (Endpoint e : implemented) {
            byOperation.put(e.method() + " " + e.path(), e);
        }
        Set<String> documented = new TreeSet<>();
        for (Contract.Operation op : contract.operations()) {
            String key = op.method() + " " + op.path();
            documented.add(key);
            Endpoint e = byOperation.get(key);
            if (e == null) {
                drift.add(key + " is documented (" + op.id() + ") but not implemented");
                continue;
            }
            compareOperation(contract, op, e, drift);
        }
        byOperation.keySet().stream().filter(k -> !documented.contains(k))
                .forEach(k -> drift.add(k + " is implemented (" + byOperation.get(k).source() + ") but not documented"));
        return drift;
    }

    private static void compareOperation(Contract contract, Contract.Operation op, Endpoint e, List<String> drift) {
        String where = op.method() + " " + op.path() + " (" + e.source() + ")";
        Set<String> docParams = contract.parameters(op).stream().map(Contract.Parameter::key)
                .filter(k -> !SECURITY_HEADERS.contains(k)).collect(Collectors.toCollection(TreeSet::new));
        both(where, "parameter", e.parameters(), docParams, drift);

        JsonNode requestBody = op.node().has("requestBody") ? contract.resolve(op.node().get("requestBody")) : null;
        if (e.body() != (requestBody != null)) {
            drift.add(where + ": the implementation " + (e.body() ? "reads" : "reads no") + " request body, the document "
                    + (requestBody != null ? "describes one" : "describes none"));
        }
        if (requestBody != null && e.body()) {
            Set<String> docConsumes = new TreeSet<>();
            requestBody.path("content").fieldNames().forEachRemaining(docConsumes::add);
            both(where, "request media type", e.consumes(), docConsumes, drift);
        }

        Set<String> docProduces = new TreeSet<>();
        contract.responses(op).forEach((status, response) -> {
            if (status.startsWith("2")) {
                response.path("content").fieldNames().forEachRemaining(docProduces::add);
            }
        });
        both(where, "success media type", e.produces(), docProduces, drift);

        Set<String> docGroups = new TreeSet<>();
        op.node().path("x-required-groups").forEach(g -> docGroups.add(g.asText()));
        if (e.groups() == null) {
            drift.add(where + ": the implementation denies every caller (@DenyAll)");
        } else {
            both(where, "required group", e.groups(), docGroups, drift);
            JsonNode security = op.node().has("security") ? op.node().get("security") : contract.root().path("security");
            boolean docSecured = security.isArray() && security.size() > 0 && security.get(0).size() > 0;
            if (docSecured != !e.groups().isEmpty()) {
                drift.add(where + ": the implementation " + (e.groups().isEmpty() ? "needs no token" : "needs a token")
                        + ", the document's security says " + (docSecured ? "it does" : "it does not"));
            }
        }
    }

    private static void both(String where, String what, Set<String> implemented, Set<String> documented, List<String> drift) {
        for (String i : implemented) {
            if (!documented.contains(i)) {
                drift.add(where + ": " + what + " " + i + " is implemented but not documented");
            }
        }
        for (String d : documented) {
            if (!implemented.contains(d)) {
                drift.add(where + ": " + what + " " + d + " is documented but not implemented");
            }
        }
    }

    // ---------------------------------------------------------------- (b) schemas

    /** How a schema is compared: responses also compare {@code required}; requests only names and types. */
    public enum Direction { RESPONSE, REQUEST }

    /**
     * Compares the JSON form of {@code type} (as {@code mapper} writes it) with the named schema, recursing
     * into nested records through {@code $ref}s. For a response, a property Jackson always writes must be
     * {@code required}; one it may omit (an {@code @JsonInclude(NON_NULL)} field) may be either, since
     * whether it is really always present is checked on live answers by the response validator, as is
     * whether a field written as {@code null} is {@code nullable}.
     * Every schema visited is added to {@code visited}.
     */
    public static List<String> schema(Contract contract, ObjectMapper mapper, Class<?> type, String schemaName, Direction direction,
                                      Set<String> visited) {
        List<String> drift = new ArrayList<>();
        compareObject(contract, mapper, type, schemaName, direction, visited, drift);
        return drift;
    }

    private static void compareObject(Contract contract, ObjectMapper mapper, Class<?> type, String schemaName, Direction direction,
                                      Set<String> visited, List<String> drift) {
        if (!visited.add(schemaName + "<-" + type.getName())) {
            return;
        }
        visited.add(schemaName);
        JsonNode schema = contract.resolve(contract.schema(schemaName));
        String where = "schema " + schemaName + " vs " + type.getName().substring(type.getName().lastIndexOf('.') + 1);
        if (!"object".equals(schema.path("type").asText())) {
            drift.add(where + ": the document's type is " + schema.path("type") + ", the implementation writes an object");
            return;
        }
        // a response must not carry an undocumented field; a request may carry one the service ignores (docs/http.md
        // "API versioning"), which the schema then says explicitly with true
        if (!schema.path("additionalProperties").isBoolean()
                || direction == Direction.RESPONSE && schema.path("additionalProperties").asBoolean()) {
            drift.add(where + ": additionalProperties must be " + (direction == Direction.RESPONSE
                    ? "false, or an undocumented field could never be detected"
                    : "given: false, or true where unknown fields are ignored"));
        }

        JavaType javaType = mapper.constructType(type);
        BeanDescription description = mapper.getSerializationConfig().introspect(javaType);
        JsonInclude.Include classInclusion = inclusion(mapper, description);
        Map<String, BeanPropertyDefinition> properties = new TreeMap<>();
        for (BeanPropertyDefinition p : description.findProperties()) {
            if (p.couldSerialize()) {
                properties.put(p.getName(), p);
            }
        }
        Set<String> docProperties = new TreeSet<>();
        schema.path("properties").fieldNames().forEachRemaining(docProperties::add);
        Set<String> docRequired = new TreeSet<>();
        schema.path("required").forEach(r -> docRequired.add(r.asText()));

        both(where, "property", properties.keySet(), docProperties, drift);
        for (String r : docRequired) {
            if (!docProperties.contains(r)) {
                drift.add(where + ": required " + r + " is not among the document's properties");
            }
        }

        for (Map.Entry<String, BeanPropertyDefinition> entry : properties.entrySet()) {
            String name = entry.getKey();
            if (!docProperties.contains(name)) {
                continue;
            }
            BeanPropertyDefinition p = entry.getValue();
            JavaType propertyType = p.getPrimaryType();
            if (direction == Direction.RESPONSE) {
                JsonInclude.Include include = p.findInclusion() != null && p.findInclusion().getValueInclusion() != JsonInclude.Include.USE_DEFAULTS
                        ? p.findInclusion().getValueInclusion() : classInclusion;
                boolean alwaysWritten = propertyType.isPrimitive() || include == JsonInclude.Include.ALWAYS;
                if (alwaysWritten && !docRequired.contains(name)) {
                    drift.add(where + ": " + name + " is always written but not required in the document");
                }
            }
            compareProperty(contract, mapper, where + "." + name, propertyType, schema.path("properties").path(name), direction, visited, drift);
        }
    }

    private static JsonInclude.Include inclusion(ObjectMapper mapper, BeanDescription description) {
        JsonInclude.Value classLevel = description.findPropertyInclusion(
                mapper.getSerializationConfig().getDefaultPropertyInclusion(description.getBeanClass()));
        JsonInclude.Include include = classLevel == null ? JsonInclude.Include.ALWAYS : classLevel.getValueInclusion();
        return include == JsonInclude.Include.USE_DEFAULTS ? JsonInclude.Include.ALWAYS : include;
    }

    private static void compareProperty(Contract contract, ObjectMapper mapper, String where, JavaType javaType, JsonNode property,
                                        Direction direction, Set<String> visited, List<String> drift) {
        JsonNode resolved = contract.resolve(property);
        Contract.refName(property).ifPresent(visited::add);
        String docType = resolved.path("type").asText("");
        String expected = jsonType(javaType);
        if (!expected.equals(docType)) {
            drift.add(where + ": the implementation writes " + expected + " (" + javaType.getRawClass().getSimpleName()
                    + "), the document says " + (docType.isEmpty() ? "no type" : docType));
            return;
        }
        if ("array".equals(expected)) {
            compareProperty(contract, mapper, where + "[]", javaType.getContentType(), resolved.path("items"), direction, visited, drift);
        } else if ("object".equals(expected)) {
            String ref = Contract.refName(property).orElse(null);
            if (ref == null) {
                drift.add(where + ": a nested object must be a $ref to a named schema so it can be compared");
            } else {
                compareObject(contract, mapper, javaType.getRawClass(), ref, direction, visited, drift);
            }
        }
    }

    private static String jsonType(JavaType type) {
        Class<?> raw = type.getRawClass();
        if (raw == long.class || raw == int.class || raw == short.class || raw == Long.class || raw == Integer.class
                || raw == Short.class || raw == java.math.BigInteger.class) {
            return "integer";
        }
        if (raw == double.class || raw == float.class || raw == Double.class || raw == Float.class || raw == java.math.BigDecimal.class) {
            return "number";
        }
        if (raw == boolean.class || raw == Boolean.class) {
            return "boolean";
        }
        if (raw == String.class || raw == UUID.class || raw.isEnum() || Temporal.class.isAssignableFrom(raw)
                || raw == java.net.URI.class) {
            return "string";
        }
        if (type.isCollectionLikeType() || type.isArrayType()) {
            return "array";
        }
        return "object";
    }

    // ---------------------------------------------------------------- enums and problem types

    /** The values of a document enum (a named schema, or a property given as {@code Schema.property}) against the implementation's. */
    public static List<String> enumeration(Contract contract, String schemaOrProperty, Collection<String> implemented) {
        JsonNode schema;
        if (schemaOrProperty.contains(".")) {
            String[] parts = schemaOrProperty.split("\\.", 2);
            schema = contract.resolve(contract.resolve(contract.schema(parts[0])).path("properties").path(parts[1]));
        } else {
            schema = contract.resolve(contract.schema(schemaOrProperty));
        }
        Set<String> documented = new TreeSet<>();
        for (JsonNode v : schema.path("enum")) {
            documented.add(v.isNull() ? "null" : v.asText());
        }
        List<String> drift = new ArrayList<>();
        both("enum " + schemaOrProperty, "value", new TreeSet<>(implemented), documented, drift);
        return drift;
    }

    /** One problem type: its name (the part after the base URI), status and title. */
    public record ProblemKind(String name, int status, String title) {
    }

    /** The implementation's problem types against {@code x-problem-types} and {@code x-problem-base} of the document. */
    public static List<String> problemTypes(Contract contract, String base, Collection<ProblemKind> implemented) {
        List<String> drift = new ArrayList<>();
        String docBase = contract.root().path("x-problem-base").asText("");
        if (!base.equals(docBase)) {
            drift.add("problem type base: the implementation uses " + base + ", the document says " + docBase);
        }
        JsonNode list = contract.resolve(contract.schema("Problem")).path("properties").path("type").path("x-problem-types");
        Set<ProblemKind> documented = new LinkedHashSet<>();
        for (Iterator<JsonNode> it = list.elements(); it.hasNext(); ) {
            JsonNode t = it.next();
            documented.add(new ProblemKind(t.path("name").asText(), t.path("status").asInt(), t.path("title").asText()));
        }
        if (documented.isEmpty()) {
            drift.add("problem types: the document lists none (Problem.type.x-problem-types)");
        }
        for (ProblemKind k : implemented) {
            if (!documented.contains(k)) {
                drift.add("problem type " + k + " is sent by the implementation but not documented as such");
            }
        }
        for (ProblemKind k : documented) {
            if (!implemented.contains(k)) {
                drift.add("problem type " + k + " is documented but the implementation has no such type");
            }
        }
        return drift;
    }

    // ---------------------------------------------------------------- (c) response codes

    /** Every (operationId, status) the document promises, as {@code "getTransfer 200"}, except the exempt statuses. */
    public static Set<String> documentedAnswers(Contract contract, Set<String> exemptStatuses) {
        Set<String> answers = new TreeSet<>();
        for (Contract.Operation op : contract.operations()) {
            for (String status : contract.responses(op).keySet()) {
                if (!exemptStatuses.contains(status)) {
                    answers.add(op.id() + " " + status);
                }
            }
        }
        return answers;
    }
}
