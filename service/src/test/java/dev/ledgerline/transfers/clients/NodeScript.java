package dev.ledgerline.transfers.clients;

import dev.ledgerline.transfers.support.Repo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * How the TypeScript SDK's tests against the real service run: a script of {@code clients/typescript/test} under the
 * machine's {@code node}, against the built SDK in {@code dist/}, printing what it saw as one JSON document on
 * stdout. Its stderr goes to {@code log}; a script that hangs, or prints nothing, fails the test with that log.
 */
final class NodeScript {

    private NodeScript() {
    }

    static JsonNode run(Path script, Duration limit, Path log, String... args) throws Exception {
        if (!Files.isRegularFile(Repo.file("clients/typescript/dist/index.js"))) {
            fail("the TypeScript SDK is not built: run ./mvnw without -Dclients.typescript.skip (needs node and npm)");
        }
        List<String> command = new ArrayList<>(List.of("node", script.toString()));
        command.addAll(List.of(args));
        Path out = Files.createTempFile(script.getFileName().toString(), ".json");
        Process node = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(log.toFile()).start();
        try {
            if (!node.waitFor(limit.toSeconds(), TimeUnit.SECONDS)) {
                fail(script + " did not finish within " + limit.toSeconds() + " s; see " + log);
            }
        } finally {
            node.destroyForcibly();
        }
        String json = Files.readString(out);
        if (json.isBlank()) {
            fail(script + " printed nothing (exit " + node.exitValue() + "): " + Files.readString(log));
        }
        return new ObjectMapper().readTree(json);
    }
}
