package dev.ledgerline.transfers.docs;

import dev.ledgerline.transfers.support.Db;
import dev.ledgerline.transfers.support.Repo;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * README's "Try it" block, extracted from README.md and run by bash exactly as written — only the port
 * differs, the test instance's instead of dev mode's 8080. It must run top to bottom without an error and
 * without a placeholder to fill in, create a transfer, replay it under the same key, and read it back sent
 * with its history. So the walkthrough cannot drift from the service. Needs bash, curl and jq
 * (README's prerequisites; .ci/verify installs them where they are missing).
 */
@QuarkusTest
class ReadmeWalkthroughTest {

    @TestHTTPResource("/")
    URL instance;

    @Test
    void theTryItBlockRunsAsPastedAndEndsWithTheTransferSent() throws Exception {
        String block = tryItBlock();
        assertFalse(Pattern.compile("<[a-zA-Z][a-zA-Z -]*>").matcher(block).find(),
                "the walkthrough has a placeholder to fill in:\n" + block);
        assertTrue(block.contains("localhost:8080"), "the walkthrough names dev mode's port");

        String script = block.replace("localhost:8080", "localhost:" + instance.getPort()) + "\necho \"walkthrough-id=$ID\"\n";
        Process bash = new ProcessBuilder("bash", "-euo", "pipefail", "-c", script).redirectErrorStream(true).start();
        bash.getOutputStream().close();
        assertTrue(bash.waitFor(90, TimeUnit.SECONDS), "the walkthrough did not finish in 90 s");
        String output = new String(bash.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, bash.exitValue(), "the walkthrough failed as pasted:\n" + output);

        Matcher id = Pattern.compile("walkthrough-id=([0-9a-f-]{36})").matcher(output);
        assertTrue(id.find(), "the replay did not give the transfer's id:\n" + output);
        String transferId = id.group(1);
        assertTrue(output.contains("HTTP/1.1 201"), "the first POST is a 201:\n" + output);
        assertTrue(Pattern.compile("(?i)location: \\S*/v1/transfers/" + transferId).matcher(output).find(),
                "the replay names the transfer the first POST created:\n" + output);
        assertTrue(output.contains("\"status\": \"sent\""), "read back after the wait, the transfer is sent:\n" + output);
        // "provider completed", or "lookup: completed" when the test profile's 1 s provider timeout fired first
        assertTrue(output.contains("\"toStatus\": \"sent\""), "the history ends with the transfer sent:\n" + output);
        assertEquals(1, Db.count("SELECT count(*) FROM transfers WHERE id = ?::uuid AND status = 'sent' AND user_id = 'alice'",
                transferId), "the row in PostgreSQL is alice's transfer, sent");
    }

    /** The first bash block under "## Try it". */
    static String tryItBlock() throws Exception {
        String readme = Files.readString(Repo.file("README.md"));
        int section = readme.indexOf("\n## Try it\n");
        assertTrue(section >= 0, "README has no Try it section");
        int start = readme.indexOf("```bash\n", section);
        int next = readme.indexOf("\n## ", section + 1);
        assertTrue(start > 0 && start < next, "the Try it section has no bash block");
        return readme.substring(start + "```bash\n".length(), readme.indexOf("\n```", start + 1));
    }
}
