package dev.ledgerline.transfers.provider;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import io.smallrye.mutiny.Uni;
import io.vertx.core.buffer.Buffer;
import jakarta.inject.Singleton;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * The provider adapter with its fault tolerance. It decides what is definitive and what is not (as
 * {@code provider-api.yaml} documents it, {@code x-ledgerline-meaning}):
 * <ul>
 *   <li>2xx: completed;</li>
 *   <li>402: rejected, definitively; 400 and 422: rejected with {@link SendResult#finalOnlyOnFirstSend()} set,
 *       definitive only when they answer the first send of a reference (returned as an item, so the breaker
 *       does not count them);</li>
 *   <li>409 (a request under this key is still in progress: it may execute) and 412 (arrived after its
 *       deadline): unknown, and never a refusal;</li>
 *   <li>401, 403, 404, 429 and other unexplained 4xx: unknown, as {@link ProviderRefusedException};</li>
 *   <li>everything else (5xx, a broken connection, an open breaker, a full bulkhead): the {@code Uni} fails,
 *       unknown.</li>
 * </ul>
 * Every string from the provider leaves this class through {@link ProviderText#clean}: no control characters,
 * at most {@value ProviderText#MAX_LENGTH} characters.
 *
 * <p>Each call runs under {@link ProviderGuards}: a timeout, a circuit breaker and a bulkhead per kind, their values
 * {@code ledgerline.provider.*} ({@code LedgerlineConfig.Provider}). The timeout stops waiting but cannot call back what
 * was written: the provider may still execute after it, which is exactly why a timeout is unknown and goes to
 * reconciliation.
 */
@Singleton
public class ProviderClient implements PaymentProvider {

    private final ProviderHttp http;
    private final ProviderGuards guards;
    private final JsonFactory json;
    private final ObjectReader payment;

    public ProviderClient(ProviderHttp http, ProviderGuards guards, ObjectMapper json) {
        this.http = http;
        this.guards = guards;
        this.json = json.getFactory();
        this.payment = json.readerFor(ProviderPayment.class);
    }

    @Override
    public Uni<SendResult> send(PaymentOrder order) {
        // built when the bulkhead gives it a turn; ProviderHttp checks the deadline as it is written
        return guards.send(() -> http.send(order.reference(), order.notAfter(), body(order)).map(this::toSendResult));
    }

    @Override
    public Uni<LookupResult> lookup(String reference) {
        return guards.lookup(() -> http.lookup(reference).map(this::toLookupResult));
    }

    /**
     * The send's body ({@code PaymentRequest} in {@code provider-api.yaml}) written field by field: data binding a
     * record reflects on its accessors; the generator escapes every string as it does. When every string is printable
     * ASCII without a quote or a backslash, which JSON writes as it is, the text is put together directly: the same
     * bytes without a generator (its buffers and context were 1.5–2.3 % of a new transfer's profile samples).
     */
    byte[] body(PaymentOrder order) {
        if (asIs(order.currency()) && asIs(order.iban()) && asIs(order.name())) {
            return ("{\"amount\":" + order.amount() + ",\"currency\":\"" + order.currency() + "\",\"destination\":{\"iban\":\""
                    + order.iban() + "\",\"name\":\"" + order.name() + "\"}}").getBytes(StandardCharsets.US_ASCII);
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(192);
        try (JsonGenerator out = json.createGenerator(bytes)) {
            out.writeStartObject();
            out.writeNumberField("amount", order.amount());
            out.writeStringField("currency", order.currency());
            out.writeObjectFieldStart("destination");
            out.writeStringField("iban", order.iban());
            out.writeStringField("name", order.name());
            out.writeEndObject();
            out.writeEndObject();
        } catch (IOException e) {
            // into memory: not expected; if it happens, nothing left the process
            throw new SendNotWrittenException("the send's body could not be written: " + e.getMessage());
        }
        return bytes.toByteArray();
    }

    /** Whether JSON writes {@code text} between quotes as it is: printable ASCII, no quote, no backslash. */
    private static boolean asIs(String text) {
        if (text == null) {
            return false;
        }
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') {
                return false;
            }
        }
        return true;
    }

    SendResult toSendResult(ProviderHttp.Answer response) {
        int status = response.status();
        if (status == 200 || status == 201) {
            return SendResult.completed();
        }
        if (status == 400 || status == 402 || status == 422) {
            ProviderPayment payment = readPayment(response.body());
            String reason = payment == null ? null : ProviderText.clean(payment.reason());
            return SendResult.rejected(reason != null ? reason : "refused by the provider (" + status + ")", status);
        }
        if (status == 409) {
            // the first request under this key is still being processed: it may well execute
            throw new ProviderUnknownOutcomeException("provider answered 409: a request under this key is in progress");
        }
        if (status == 412) {
            // refused for arriving after its deadline: not executed; the reconciler's lookup will say so
            throw new ProviderUnknownOutcomeException("provider refused a send that arrived after its deadline");
        }
        if (status >= 400 && status < 500) {
            throw new ProviderRefusedException(status);
        }
        throw new ProviderUnknownOutcomeException("provider answered " + status + " to a send");
    }

    LookupResult toLookupResult(ProviderHttp.Answer response) {
        int status = response.status();
        if (status == 404) {
            return LookupResult.notFound();
        }
        if (status == 200) {
            ProviderPayment payment = readPayment(response.body());
            if (payment != null && "completed".equals(payment.status())) {
                return LookupResult.completed();
            }
            if (payment != null && "rejected".equals(payment.status())) {
                String reason = ProviderText.clean(payment.reason());
                return LookupResult.rejected(reason == null ? "rejected by provider" : reason);
            }
        }
        throw new ProviderUnknownOutcomeException("provider answered " + status + " to a lookup");
    }

    /** The answer's payment, or {@code null} when it has none or it is not one. */
    private ProviderPayment readPayment(Buffer body) {
        try {
            return body == null || body.length() == 0 ? null : payment.readValue(body.getBytes());
        } catch (IOException | RuntimeException garbled) {
            return null;
        }
    }
}
