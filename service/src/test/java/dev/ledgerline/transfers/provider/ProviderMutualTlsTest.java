package dev.ledgerline.transfers.provider;

import dev.ledgerline.transfers.support.TestStack;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A provider that takes mutual TLS, configured as docs/provider.md says: the service's client trusts the provider's
 * certificate through {@code quarkus.tls.provider.trust-store} (it is self-signed, so nothing else would) and presents
 * its own from {@code quarkus.tls.provider.key-store}, without which the provider closes the handshake.
 */
@QuarkusTest
@WithTestResource(MutualTlsProvider.class)
class ProviderMutualTlsTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    @Inject
    PaymentProvider provider;

    @AfterEach
    void closeBreakers() {
        TestStack.closeBreakers();
    }

    @Test
    void aSendAndALookupGoOverTlsWithTheConfiguredClientCertificateAndToken() {
        String reference = "ll_" + UUID.randomUUID();
        RecordingProvider.current().answer(reference, 201, "{\"reference\":\"" + reference + "\",\"status\":\"completed\"}");
        SendResult sent = provider.send(new PaymentOrder(reference, 1250, "EUR", "DE89370400440532013000", "Ada Lovelace",
                Instant.now().plusSeconds(30))).await().atMost(WAIT);
        assertTrue(sent.executed());
        RecordingProvider.current().answer(reference, 200, "{\"reference\":\"" + reference + "\",\"status\":\"rejected\",\"reason\":\"closed\"}");
        LookupResult looked = provider.lookup(reference).await().atMost(WAIT);
        assertEquals(LookupResult.Kind.REJECTED, looked.kind());
        assertEquals("closed", looked.reason());

        List<RecordingProvider.Recorded> requests = RecordingProvider.current().requestsFor(reference);
        assertEquals(List.of("POST /payments", "GET /payments/" + reference),
                requests.stream().map(r -> r.method() + " " + r.path()).toList());
        for (RecordingProvider.Recorded request : requests) {
            assertEquals(MutualTlsProvider.CLIENT, request.client(), "the client certificate the provider saw");
            assertEquals(RecordingProvider.TOKEN, request.headers().get("authorization"));
        }
    }
}
