package dev.ledgerline.transfers.support;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Files at the repository's top level ({@code openapi.yaml}, {@code provider-api.yaml}, {@code docs/}, {@code ops/},
 * {@code clients/}, README): each module's tests run in the module's own folder, so the top level is found by
 * walking up to the folder that holds the reactor's {@code mvnw} and the contract.
 */
public final class Repo {

    private static final Path ROOT = locate();

    private Repo() {
    }

    /** {@code relative} under the repository's top level. */
    public static Path file(String relative) {
        return ROOT.resolve(relative);
    }

    private static Path locate() {
        Path cwd = Path.of("").toAbsolutePath();
        for (Path dir = cwd; dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("mvnw")) && Files.isRegularFile(dir.resolve("openapi.yaml"))) {
                return dir;
            }
        }
        throw new IllegalStateException("no repository top level (mvnw and openapi.yaml) above " + cwd);
    }
}
