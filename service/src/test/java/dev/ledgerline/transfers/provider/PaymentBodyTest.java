package dev.ledgerline.transfers.provider;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The send's body, written field by field or, for printable ASCII without quotes or backslashes, put together as text, is
 * byte for byte what data binding writes to bytes for the same fields, whatever the name, the IBAN and the amount hold.
 */
class PaymentBodyTest {

    private final ObjectMapper json = new ObjectMapper();
    private final ProviderClient client = new ProviderClient(null, null, json);

    @Test
    void theSameJsonAsDataBindingForAnyName() throws Exception {
        for (String name : new String[] {"Ada Lovelace", "O'Brien \"the\" \\ one", "tab\tnew\nline\u0001bell", "Zoë Łukasz 李",
                "emoji \uD83D\uDCB8", "</script>", "", " ~ ", "del\u007f", "a\"", "\\"}) {
            assertSameAsDataBinding(new PaymentOrder("ref-1", 1_250, "EUR", "DE89370400440532013000", name, Instant.EPOCH));
        }
    }

    /** Names, IBANs and amounts of every kind, printable ASCII (written as they are) and not (through the generator). */
    @Test
    void theSameJsonAsDataBindingForGeneratedOrders() throws Exception {
        String pieces = " !\"#/09:@AZ[\\]`az{|}~\u007f\u0000\u001féŁ李";
        Random random = new Random(5L);
        for (int i = 0; i < 20_000; i++) {
            StringBuilder name = new StringBuilder();
            int length = random.nextInt(12);
            for (int c = 0; c < length; c++) {
                name.append(random.nextInt(4) > 0 ? (char) (0x20 + random.nextInt(0x5f)) : pieces.charAt(random.nextInt(pieces.length())));
            }
            String iban = random.nextInt(10) > 0 ? "DE89370400440532013000" : name.reverse().toString();
            long amount = random.nextInt(3) > 0 ? random.nextInt(1_000_000) : random.nextLong();
            assertSameAsDataBinding(new PaymentOrder("ref-" + i, amount, random.nextBoolean() ? "EUR" : "CHF", iban,
                    name.toString(), Instant.EPOCH));
        }
    }

    private void assertSameAsDataBinding(PaymentOrder order) throws Exception {
        byte[] written = client.body(order);
        Map<String, Object> destination = new LinkedHashMap<>();
        destination.put("iban", order.iban());
        destination.put("name", order.name());
        Map<String, Object> expected = new LinkedHashMap<>();
        expected.put("amount", order.amount());
        expected.put("currency", order.currency());
        expected.put("destination", destination);
        assertEquals(new String(json.writeValueAsBytes(expected), UTF_8), new String(written, UTF_8), order.name());
        JsonNode read = json.readTree(written);
        assertEquals(order.name(), read.path("destination").path("name").asText(), "reads back as the same name");
    }
}
