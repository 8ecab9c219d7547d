package dev.ledgerline.transfers.clients;

import dev.ledgerline.sdk.WebhookSignatures;
import dev.ledgerline.transfers.webhooks.WebhookSignature;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Instant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The Java SDK's verifier accepts what the service signs, and nothing else. */
class WebhookSignaturesTest {

    private static final String BODY = "{\"id\":\"3f1c2a9e-5b7d-4c1e-9a8f-2d6b4e0c7a11.2\",\"description\":\"Miete für Zoë\"}";

    @Test
    void acceptsTheServicesSignatureWithinTheTolerance() {
        String secret = WebhookSignature.newSecret();
        long t = 1_762_161_330L;
        String header = WebhookSignature.header(secret, t, BODY);
        byte[] body = BODY.getBytes(StandardCharsets.UTF_8);
        assertTrue(WebhookSignatures.verifySignature(secret, header, body, 300, Instant.ofEpochSecond(t)));
        assertTrue(WebhookSignatures.verifySignature(secret, header, body, 300, Instant.ofEpochSecond(t + 300)));
        assertTrue(WebhookSignatures.verifySignature(secret, header, body, 300, Instant.ofEpochSecond(t - 300)));
        assertTrue(WebhookSignatures.verifySignature(secret, header, BODY, 300) == (Math.abs(Instant.now().getEpochSecond() - t) <= 300));
    }

    /** The same vector clients/typescript/test/signature.test.mjs verifies: the service, and both SDKs, agree on it. */
    @Test
    void theServiceSignsTheSharedVector() {
        String header = WebhookSignature.header("whsec_test", 1_700_000_000L, "{\"id\":\"a.1\"}");
        assertEquals("t=1700000000,v1=10bd7a640f04319da2ffedf4543679d0e5a3674064d3183fb0e0293a8c739cfd", header);
        assertTrue(WebhookSignatures.verifySignature("whsec_test", header, "{\"id\":\"a.1\"}".getBytes(StandardCharsets.UTF_8), 300,
                Instant.ofEpochSecond(1_700_000_000L)));
    }

    @Test
    void whileARotatedSecretStillSignsEitherSecretVerifiesAndNoOther() {
        String previous = WebhookSignature.newSecret();
        String current = WebhookSignature.newSecret();
        long t = 1_762_161_330L;
        String header = WebhookSignature.header(current, previous, t, BODY);
        assertEquals(2, header.split("v1=", -1).length - 1, header);
        byte[] body = BODY.getBytes(StandardCharsets.UTF_8);
        Instant at = Instant.ofEpochSecond(t);
        assertTrue(WebhookSignatures.verifySignature(current, header, body, 300, at), "the new secret");
        assertTrue(WebhookSignatures.verifySignature(previous, header, body, 300, at), "the replaced one, during the overlap");
        assertFalse(WebhookSignatures.verifySignature(WebhookSignature.newSecret(), header, body, 300, at), "any other");
        assertEquals(WebhookSignature.header(current, t, BODY), WebhookSignature.header(current, null, t, BODY),
                "without a previous secret, one v1");
    }

    @Test
    void refusesAnythingElse() {
        String secret = WebhookSignature.newSecret();
        long t = 1_762_161_330L;
        String header = WebhookSignature.header(secret, t, BODY);
        byte[] body = BODY.getBytes(StandardCharsets.UTF_8);
        Instant at = Instant.ofEpochSecond(t);
        assertFalse(WebhookSignatures.verifySignature(secret, header, body, 300, Instant.ofEpochSecond(t + 301)), "too old");
        assertFalse(WebhookSignatures.verifySignature(secret, header, body, 300, Instant.ofEpochSecond(t - 301)), "from the future");
        assertFalse(WebhookSignatures.verifySignature(WebhookSignature.newSecret(), header, body, 300, at), "another secret");
        assertFalse(WebhookSignatures.verifySignature(secret, header, (BODY + " ").getBytes(StandardCharsets.UTF_8), 300, at), "another body");
        assertFalse(WebhookSignatures.verifySignature(secret, header.replace("t=" + t, "t=" + (t + 1)), body, 300, at), "another t");
        assertFalse(WebhookSignatures.verifySignature(secret, "t=" + t, body, 300, at), "no v1");
        assertFalse(WebhookSignatures.verifySignature(secret, "v1=" + header.substring(header.indexOf("v1=") + 3), body, 300, at), "no t");
        assertFalse(WebhookSignatures.verifySignature(secret, "t=abc,v1=00", body, 300, at), "not a number");
        assertFalse(WebhookSignatures.verifySignature(secret, null, body, 300, at), "no header");
        assertFalse(WebhookSignatures.verifySignature(secret, "", body, 300, at), "empty header");
    }
}
