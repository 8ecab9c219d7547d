package dev.ledgerline.transfers.contract;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.ledgerline.transfers.api.TransferResource;
import dev.ledgerline.transfers.api.TransferView;
import dev.ledgerline.transfers.support.Contract;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.hasItem;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The drift check cannot pass vacuously: it refuses a missing or empty document, and it reports a
 * document that was changed behind the implementation's back. Plain JUnit, no running service.
 */
class ContractDriftCheckTest {

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    @TempDir
    Path dir;

    @Test
    void aMissingDocumentFailsTheCheck() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> Contract.load(dir.resolve("openapi.yaml")));
        assertThat(e.getMessage(), containsString("does not exist"));
    }

    @Test
    void anEmptyDocumentFailsTheCheck() throws Exception {
        for (String text : List.of("", " \n\t\n")) {
            Path empty = Files.writeString(dir.resolve("empty.yaml"), text);
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> Contract.load(empty));
            assertThat(e.getMessage(), containsString("is empty"));
        }
    }

    @Test
    void aDocumentWithoutOperationsFailsTheCheck() throws Exception {
        Path bare = Files.writeString(dir.resolve("bare.yaml"), "openapi: 3.0.3\ninfo: {title: x, version: '1'}\npaths: {}\n");
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> Contract.load(bare));
        assertThat(e.getMessage(), containsString("describes no operation"));
        Path notOpenApi = Files.writeString(dir.resolve("list.yaml"), "- just\n- a list\n");
        assertThrows(IllegalStateException.class, () -> Contract.load(notOpenApi));
    }

    @Test
    void anUndocumentedOperationIsDrift() throws Exception {
        Contract tampered = tampered(doc -> ((ObjectNode) doc.get("paths")).remove("/v1/transfers/{id}/events"));
        assertThat(ContractDrift.operations(tampered, implemented()),
                hasItem(containsString("GET /v1/transfers/{id}/events is implemented")));
    }

    @Test
    void aDocumentedOperationTheServiceLacksIsDrift() throws Exception {
        Contract tampered = tampered(doc -> {
            ObjectNode path = (ObjectNode) doc.get("paths").get("/v1/transfers/{id}");
            ObjectNode delete = path.get("get").deepCopy();
            path.set("delete", delete.put("operationId", "deleteTransfer"));
        });
        assertThat(ContractDrift.operations(tampered, implemented()),
                hasItem(containsString("DELETE /v1/transfers/{id} is documented (deleteTransfer) but not implemented")));
    }

    @Test
    void anUndocumentedParameterOrGroupIsDrift() throws Exception {
        Contract tampered = tampered(doc -> {
            ObjectNode get = (ObjectNode) doc.get("paths").get("/v1/transfers/{id}").get("get");
            get.remove("parameters");
            ((ArrayNode) get.get("x-required-groups")).remove(1);
        });
        List<String> drift = ContractDrift.operations(tampered, implemented());
        assertThat(drift, hasItem(containsString("parameter header:if-none-match is implemented but not documented")));
        assertThat(drift, hasItem(containsString("required group transfers.read.all is implemented but not documented")));
    }

    @Test
    void anUndocumentedOrMissingFieldIsDrift() throws Exception {
        Contract tampered = tampered(doc -> {
            ObjectNode transfer = (ObjectNode) doc.get("components").get("schemas").get("Transfer");
            ((ObjectNode) transfer.get("properties")).remove("failureReason");
            ((ObjectNode) transfer.get("properties")).putObject("fee").put("type", "integer");
            ArrayNode required = (ArrayNode) transfer.get("required");
            for (int i = required.size() - 1; i >= 0; i--) {
                if (Set.of("failureReason", "updatedAt").contains(required.get(i).asText())) {
                    required.remove(i);
                }
            }
        });
        List<String> drift = ContractDrift.schema(tampered, new ObjectMapper(), TransferView.class, "Transfer",
                ContractDrift.Direction.RESPONSE, new TreeSet<>());
        assertThat(drift, hasItem(containsString("property failureReason is implemented but not documented")));
        assertThat(drift, hasItem(containsString("property fee is documented but not implemented")));
        assertThat(drift, hasItem(containsString("updatedAt is always written but not required")));
    }

    @Test
    void aProblemTypeOrStatusTheServiceDoesNotKnowIsDrift() throws Exception {
        Contract contract = Contract.load(Contract.defaultLocation());
        assertThat(ContractDrift.problemTypes(contract, "https://ledgerline.dev/problems/",
                        List.of(new ContractDrift.ProblemKind("teapot", 418, "I'm a teapot"))),
                hasItem(containsString("teapot")));
        assertThat(ContractDrift.enumeration(contract, "TransferStatus", List.of("pending", "sent")),
                hasItem(containsString("value failed is documented but not implemented")));
    }

    private static List<ContractDrift.Endpoint> implemented() {
        return ContractDrift.implemented(TransferResource.class, "dev.ledgerline.transfers", Set.of("/dev", "/sandbox"));
    }

    private Contract tampered(Consumer<ObjectNode> change) throws Exception {
        ObjectNode doc = (ObjectNode) YAML.readTree(Contract.defaultLocation().toFile());
        change.accept(doc);
        Path copy = dir.resolve("tampered.yaml");
        YAML.writeValue(copy.toFile(), doc);
        return Contract.load(copy);
    }
}
