package dev.ledgerline.transfers.provider;

import com.atlassian.oai.validator.OpenApiInteractionValidator;
import com.atlassian.oai.validator.model.Request;
import com.atlassian.oai.validator.model.SimpleRequest;
import com.atlassian.oai.validator.report.LevelResolver;
import com.atlassian.oai.validator.report.ValidationReport;
import com.fasterxml.jackson.databind.JsonNode;
import dev.ledgerline.transfers.support.Contract;
import dev.ledgerline.transfers.support.Repo;
import dev.ledgerline.transfers.support.TestStack;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The service's own provider client against {@code provider-api.yaml}: what it puts on the wire is a
 * documented request (headers, body, the configured bearer token), and it reads every documented answer
 * the way the contract says — {@code x-ledgerline-meaning}: completed, rejected, rejected only if it answers
 * the first send of a key ({@link SendResult#finalOnlyOnFirstSend()}), or unknown (a failed {@code Uni}, to be
 * reconciled by lookup). An undocumented status the client treated as definitive
 * would be drift too. The sandbox's side of the same contract is checked by {@code SandboxConformanceTest}.
 */
@QuarkusTest
@WithTestResource(RecordingProvider.class)
class ProviderClientContractTest {

    private static final Duration WAIT = Duration.ofSeconds(10);
    /** Statuses a provider might answer; each must be read as the contract says, or as unknown if undocumented. */
    private static final int[] STATUSES = {200, 201, 202, 204, 400, 401, 402, 403, 404, 409, 412, 422, 429, 500, 502, 503};

    @Inject
    PaymentProvider provider;

    private final Contract contract = Contract.load(Repo.file("provider-api.yaml"));

    @AfterEach
    void closeBreakers() {
        TestStack.closeBreakers();
    }

    @Test
    void aSendAndALookupAreDocumentedRequestsCarryingTheConfiguredToken() throws Exception {
        String reference = "ll_" + UUID.randomUUID();
        RecordingProvider.current().answer(reference, 201, "{\"reference\":\"" + reference + "\",\"status\":\"completed\"}");
        Instant deadline = Instant.now().plusSeconds(30);
        SendResult sent = provider.send(new PaymentOrder(reference, 1250, "EUR", "DE89370400440532013000", "Ada Lovelace", deadline))
                .await().atMost(WAIT);
        assertTrue(sent.executed());
        RecordingProvider.current().answer(reference, 200, "{\"reference\":\"" + reference + "\",\"status\":\"completed\"}");
        assertEquals(LookupResult.Kind.COMPLETED, provider.lookup(reference).await().atMost(WAIT).kind());

        OpenApiInteractionValidator validator = OpenApiInteractionValidator
                .createForInlineApiSpecification(Files.readString(Repo.file("provider-api.yaml")))
                .withLevelResolver(LevelResolver.create().withDefaultLevel(ValidationReport.Level.ERROR).build())
                .withStrictOperationPathMatching().build();
        List<RecordingProvider.Recorded> requests = RecordingProvider.current().requestsFor(reference);
        assertEquals(List.of("POST /payments", "GET /payments/" + reference),
                requests.stream().map(r -> r.method() + " " + r.path()).toList());
        for (RecordingProvider.Recorded r : requests) {
            SimpleRequest.Builder request = new SimpleRequest.Builder(r.method(), r.path());
            r.headers().forEach(request::withHeader);
            if (!r.body().isEmpty()) {
                request.withBody(r.body());
            }
            ValidationReport report = validator.validateRequest(request.build());
            assertTrue(report.getMessages().stream().noneMatch(m -> m.getLevel() == ValidationReport.Level.ERROR),
                    r.method() + " " + r.path() + " does not match provider-api.yaml: " + report.getMessages());
            assertEquals(RecordingProvider.TOKEN, r.headers().get("authorization"), "the configured credentials");
        }
        RecordingProvider.Recorded send = requests.get(0);
        assertEquals(reference, send.headers().get("idempotency-key"));
        assertEquals(deadline, Instant.parse(send.headers().get("ledgerline-not-after")));
    }

    @Test
    void everySendAnswerIsReadAsTheContractSays() {
        Contract.Operation op = contract.operationById("sendPayment");
        Map<String, JsonNode> documented = contract.responses(op);
        List<String> drift = new ArrayList<>();
        for (int status : STATUSES) {
            String meaning = documented.containsKey(Integer.toString(status))
                    ? documented.get(Integer.toString(status)).path("x-ledgerline-meaning").asText() : "unknown";
            String body = switch (meaning) {
                case "completed" -> "{\"status\":\"completed\"}";
                case "rejected", "rejected-if-first-send" -> "{\"status\":\"rejected\",\"reason\":\"account closed\"}";
                default -> status < 300 ? "{\"status\":\"completed\"}" : "{\"status\":\"rejected\"}";
            };
            String reference = "ll_" + UUID.randomUUID();
            RecordingProvider.current().answer(reference, status, body);
            String read = readSend(reference);
            if (!read.equals(meaning)) {
                drift.add(status + " " + body + ": the contract says " + meaning + ", the client read " + read);
            }
            TestStack.closeBreakers();
        }
        assertTrue(drift.isEmpty(), "the provider client and provider-api.yaml disagree: " + drift);
    }

    @Test
    void everyLookupAnswerIsReadAsTheContractSays() {
        Map<String, String> expected = Map.of(
                "200 {\"status\":\"completed\"}", "COMPLETED",
                "200 {\"status\":\"rejected\",\"reason\":\"account closed\"}", "REJECTED",
                "404 ", "NOT_FOUND",
                "503 ", "unknown",
                "500 ", "unknown",
                "200 {\"status\":\"pending\"}", "unknown");
        List<String> drift = new ArrayList<>();
        expected.forEach((answer, meaning) -> {
            int status = Integer.parseInt(answer.substring(0, 3));
            String body = answer.substring(4);
            String reference = "ll_" + UUID.randomUUID();
            RecordingProvider.current().answer(reference, status, body.isEmpty() ? null : body);
            String read;
            try {
                read = provider.lookup(reference).await().atMost(WAIT).kind().name();
            } catch (RuntimeException unknown) {
                read = "unknown";
            }
            if (!read.equals(meaning)) {
                drift.add(answer + ": expected " + meaning + ", the client read " + read);
            }
            TestStack.closeBreakers();
        });
        assertTrue(drift.isEmpty(), "the provider client and provider-api.yaml disagree: " + drift);
        // the contract documents exactly the lookup answers the client reads as definitive
        assertEquals(List.of("200", "404", "503"), List.copyOf(contract.responses(contract.operationById("lookupPayment")).keySet()));
    }

    /** A 409 says a request under this key is still being processed: the payment may well execute. */
    @Test
    void a409IsAnUnknownOutcomeAndNeverARefusal() {
        String reference = "ll_" + UUID.randomUUID();
        RecordingProvider.current().answer(reference, 409, "{\"status\":\"rejected\",\"reason\":\"in progress\"}");
        RuntimeException failure = assertThrows(ProviderUnknownOutcomeException.class, () -> send(reference));
        assertFalse(failure instanceof ProviderRefusedException,
                "a 409 counted as a refusal (no money moved), while the first request under its key may still execute: " + failure);
    }

    /** A NUL or an escape sequence from the provider must not reach the database or the client's screen. */
    @Test
    void aProviderReasonIsStrippedOfControlCharactersAndCutTo200Characters() {
        String reference = "ll_" + UUID.randomUUID();
        String raw = "account\\u0000 closed\\r\\n\\u001b[31m " + "x".repeat(500);
        RecordingProvider.current().answer(reference, 402, "{\"status\":\"rejected\",\"reason\":\"" + raw + "\"}");
        SendResult rejected = send(reference);
        assertEquals(402, rejected.status(), "the provider's status is kept with the rejection");
        String sent = rejected.reason();
        assertCleanAndBounded(sent);
        assertTrue(sent.startsWith("account closed [31m xxx"), sent);

        RecordingProvider.current().answer(reference, 200, "{\"status\":\"rejected\",\"reason\":\"" + raw + "\"}");
        LookupResult looked = provider.lookup(reference).await().atMost(WAIT);
        assertEquals(LookupResult.Kind.REJECTED, looked.kind());
        assertCleanAndBounded(looked.reason());
    }

    private static void assertCleanAndBounded(String reason) {
        assertTrue(reason.length() <= 200, "a provider reason of " + reason.length() + " characters left the client");
        assertTrue(reason.chars().noneMatch(Character::isISOControl), "a control character left the client: " + reason);
    }

    private SendResult send(String reference) {
        return provider.send(new PaymentOrder(reference, 1250, "EUR", "DE89370400440532013000", "Ada Lovelace",
                Instant.now().plusSeconds(30))).await().atMost(WAIT);
    }

    private String readSend(String reference) {
        try {
            SendResult result = provider.send(new PaymentOrder(reference, 1250, "EUR", "DE89370400440532013000", "Ada Lovelace",
                    Instant.now().plusSeconds(30))).await().atMost(WAIT);
            return result.executed() ? "completed" : result.finalOnlyOnFirstSend() ? "rejected-if-first-send" : "rejected";
        } catch (RuntimeException unknown) {
            return "unknown";
        }
    }
}
