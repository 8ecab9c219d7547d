package dev.ledgerline.transfers;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The packages under {@code dev.ledgerline.transfers} form no cycle (ARCHITECTURE.md "Packages"): dependencies
 * point one way, api → service → domain → infrastructure → config. Reads the production sources' imports (plain,
 * static and on-demand) and fully qualified names in code (comments and string literals left out), builds the
 * package graph, and fails naming every cycle with the files that make each of its arrows.
 */
class PackageCyclesTest {

    private static final String BASE = "dev.ledgerline.transfers";
    private static final Path SOURCES = Path.of("src/main/java", BASE.split("\\."));
    private static final Pattern REFERENCE = Pattern.compile("\\b" + Pattern.quote(BASE) + "((?:\\.[a-z_][a-z0-9_]*)*)\\.[A-Z*]");
    private static final Pattern COMMENTS_AND_STRINGS = Pattern.compile(
            "//[^\\n]*|/\\*.*?\\*/|\"\"\".*?\"\"\"|\"(?:\\\\.|[^\"\\\\])*\"|'(?:\\\\.|[^'\\\\])*'", Pattern.DOTALL);

    @Test
    void thePackageGraphHasNoCycle() throws IOException {
        Map<String, Map<String, TreeSet<String>>> graph = graph();
        assertFalse(graph.isEmpty(), "no sources found under " + SOURCES.toAbsolutePath());
        List<String> cycles = cycles(graph);
        assertTrue(cycles.isEmpty(), () -> "package cycles under " + BASE + ":\n" + String.join("\n", cycles));
    }

    /** package → package it uses → the files that use it. */
    private static Map<String, Map<String, TreeSet<String>>> graph() throws IOException {
        Map<String, Map<String, TreeSet<String>>> graph = new TreeMap<>();
        try (Stream<Path> files = Files.walk(SOURCES)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                String relative = SOURCES.relativize(file).toString().replace('\\', '/');
                String from = packageOf(relative);
                graph.computeIfAbsent(from, p -> new TreeMap<>());
                String code = COMMENTS_AND_STRINGS.matcher(Files.readString(file)).replaceAll(" ");
                Matcher m = REFERENCE.matcher(code);
                while (m.find()) {
                    String to = m.group(1).isEmpty() ? "(root)" : m.group(1).substring(1);
                    if (!to.equals(from)) {
                        graph.get(from).computeIfAbsent(to, p -> new TreeSet<>()).add(relative);
                    }
                }
            }
        }
        return graph;
    }

    private static String packageOf(String relative) {
        int slash = relative.lastIndexOf('/');
        return slash < 0 ? "(root)" : relative.substring(0, slash).replace('/', '.');
    }

    /** Every strongly connected set of packages larger than one, as one cycle through it with its arrows. */
    private static List<String> cycles(Map<String, Map<String, TreeSet<String>>> graph) {
        List<String> cycles = new ArrayList<>();
        for (List<String> component : new Tarjan(graph).components) {
            if (component.size() > 1) {
                cycles.add(describe(graph, cycleThrough(graph, component)));
            }
        }
        return cycles;
    }

    /** A path from the component's first package back to it, staying inside the component. */
    private static List<String> cycleThrough(Map<String, Map<String, TreeSet<String>>> graph, List<String> component) {
        String start = component.get(0);
        Map<String, String> parent = new TreeMap<>();
        List<String> queue = new ArrayList<>(List.of(start));
        for (int i = 0; i < queue.size(); i++) {
            String at = queue.get(i);
            for (String next : graph.getOrDefault(at, Map.of()).keySet()) {
                if (next.equals(start)) {
                    List<String> path = new ArrayList<>(List.of(start));
                    for (String p = at; !p.equals(start); p = parent.get(p)) {
                        path.add(1, p);
                    }
                    path.add(start);
                    return path;
                }
                if (component.contains(next) && !parent.containsKey(next)) {
                    parent.put(next, at);
                    queue.add(next);
                }
            }
        }
        throw new IllegalStateException("a strongly connected component without a cycle: " + component);
    }

    private static String describe(Map<String, Map<String, TreeSet<String>>> graph, List<String> path) {
        StringBuilder out = new StringBuilder("  " + String.join(" -> ", path));
        for (int i = 0; i + 1 < path.size(); i++) {
            out.append("\n    ").append(path.get(i)).append(" -> ").append(path.get(i + 1)).append(": ")
                    .append(String.join(", ", graph.get(path.get(i)).get(path.get(i + 1))));
        }
        return out.toString();
    }

    /** Tarjan's strongly connected components. */
    private static final class Tarjan {
        final List<List<String>> components = new ArrayList<>();
        private final Map<String, Map<String, TreeSet<String>>> graph;
        private final Map<String, Integer> index = new TreeMap<>();
        private final Map<String, Integer> low = new TreeMap<>();
        private final List<String> stack = new ArrayList<>();

        Tarjan(Map<String, Map<String, TreeSet<String>>> graph) {
            this.graph = graph;
            for (String p : graph.keySet()) {
                if (!index.containsKey(p)) {
                    visit(p);
                }
            }
        }

        private void visit(String p) {
            index.put(p, index.size());
            low.put(p, index.get(p));
            stack.add(p);
            for (String next : graph.getOrDefault(p, Map.of()).keySet()) {
                if (!index.containsKey(next)) {
                    visit(next);
                    low.put(p, Math.min(low.get(p), low.get(next)));
                } else if (stack.contains(next)) {
                    low.put(p, Math.min(low.get(p), index.get(next)));
                }
            }
            if (low.get(p).equals(index.get(p))) {
                List<String> component = new ArrayList<>();
                String q;
                do {
                    q = stack.remove(stack.size() - 1);
                    component.add(0, q);
                } while (!q.equals(p));
                components.add(component);
            }
        }
    }
}
