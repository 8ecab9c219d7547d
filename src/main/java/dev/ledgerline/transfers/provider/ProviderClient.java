package dev.ledgerline.transfers.provider;

import io.smallrye.faulttolerance.api.CircuitBreakerName;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.faulttolerance.Bulkhead;
import org.eclipse.microprofile.faulttolerance.CircuitBreaker;
import org.eclipse.microprofile.faulttolerance.Timeout;
import org.eclipse.microprofile.rest.client.inject.RestClient;

/**
 * The provider adapter with its fault tolerance. It decides what is definitive and what is not:
 * 2xx is completed; 400 (the provider refused the request itself, e.g. a beneficiary it will not pay), 402 and
 * 422 are definitive rejections (returned as an item, so the breaker does not count them); everything else —
 * timeout, 5xx, 412 (arrived after its deadline: not executed, the lookup settles it), 401/403/404/409/429 and
 * other 4xx, a broken connection, an open breaker, a full bulkhead — fails the {@code Uni} and means "unknown".
 * Unexplained 4xx answers are bounded by the reconciler ({@code ledgerline.pipeline.max-refused-sends}), not retried forever.
 *
 * <p>{@code @Timeout} stops waiting but does not cancel the call: the provider may still execute after
 * the timeout, which is exactly why a timeout is unknown and goes to reconciliation.
 */
@ApplicationScoped
public class ProviderClient implements PaymentProvider {

    public static final String SEND_BREAKER = "provider-send";
    public static final String LOOKUP_BREAKER = "provider-lookup";

    private final ProviderRestClient rest;

    public ProviderClient(@RestClient ProviderRestClient rest) {
        this.rest = rest;
    }

    @Override
    @Timeout(5000)
    @CircuitBreaker(requestVolumeThreshold = 10, failureRatio = 0.5, delay = 5000, successThreshold = 2)
    @CircuitBreakerName(SEND_BREAKER)
    @Bulkhead(value = 64, waitingTaskQueue = 256)
    public Uni<SendResult> send(PaymentOrder order) {
        var body = new ProviderRestClient.PaymentBody(order.amount(), order.currency(),
                new ProviderRestClient.PaymentBody.Destination(order.iban(), order.name()));
        // deferred: built when the bulkhead lets it through, and DeadlineFilter checks the deadline as it is written
        return Uni.createFrom().deferred(() -> rest.send(order.reference(), order.notAfter().toString(), body))
                .map(ProviderClient::toSendResult);
    }

    @Override
    @Timeout(5000)
    @CircuitBreaker(requestVolumeThreshold = 10, failureRatio = 0.5, delay = 5000, successThreshold = 2)
    @CircuitBreakerName(LOOKUP_BREAKER)
    @Bulkhead(value = 64, waitingTaskQueue = 256)
    public Uni<LookupResult> lookup(String reference) {
        return rest.lookup(reference).map(ProviderClient::toLookupResult);
    }

    static SendResult toSendResult(Response response) {
        try (response) {
            int status = response.getStatus();
            if (status == 200 || status == 201) {
                return SendResult.completed();
            }
            if (status == 400 || status == 402 || status == 422) {
                ProviderPayment payment = readPayment(response);
                return SendResult.rejected(payment != null && payment.reason() != null
                        ? payment.reason() : "refused by the provider (" + status + ")");
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
    }

    static LookupResult toLookupResult(Response response) {
        try (response) {
            int status = response.getStatus();
            if (status == 404) {
                return LookupResult.notFound();
            }
            if (status == 200) {
                ProviderPayment payment = readPayment(response);
                if (payment != null && "completed".equals(payment.status())) {
                    return LookupResult.completed();
                }
                if (payment != null && "rejected".equals(payment.status())) {
                    return LookupResult.rejected(payment.reason() == null ? "rejected by provider" : payment.reason());
                }
            }
            throw new ProviderUnknownOutcomeException("provider answered " + status + " to a lookup");
        }
    }

    private static ProviderPayment readPayment(Response response) {
        try {
            return response.readEntity(ProviderPayment.class);
        } catch (RuntimeException garbled) {
            return null;
        }
    }
}
