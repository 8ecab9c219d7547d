package dev.ledgerline.transfers.provider;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The send's body, written field by field, is byte for byte what data binding writes to bytes for the same fields,
 * whatever the name holds.
 */
class PaymentBodyTest {

    private final ObjectMapper json = new ObjectMapper();
    private final ProviderClient client = new ProviderClient(null, json);

    @Test
    void theSameJsonAsDataBindingForAnyName() throws Exception {
        for (String name : new String[] {"Ada Lovelace", "O'Brien \"the\" \\ one", "tab\tnew\nline\u0001bell", "Zoë Łukasz 李",
                "emoji \uD83D\uDCB8", "</script>", ""}) {
            PaymentOrder order = new PaymentOrder("ref-1", 1_250, "EUR", "DE89370400440532013000", name, Instant.EPOCH);
            byte[] written = client.body(order);
            Map<String, Object> destination = new LinkedHashMap<>();
            destination.put("iban", order.iban());
            destination.put("name", name);
            Map<String, Object> expected = new LinkedHashMap<>();
            expected.put("amount", order.amount());
            expected.put("currency", order.currency());
            expected.put("destination", destination);
            assertEquals(new String(json.writeValueAsBytes(expected), UTF_8), new String(written, UTF_8), name);
            JsonNode read = json.readTree(written);
            assertEquals(name, read.path("destination").path("name").asText(), "reads back as the same name");
        }
    }
}
