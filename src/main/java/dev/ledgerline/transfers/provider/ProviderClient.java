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
 * 2xx is completed, 4xx with a rejection body is a definitive rejection (returned as an item, so the
 * breaker does not count it), everything else — timeout, 5xx, broken connection, open breaker, full
 * bulkhead — fails the {@code Uni} and means "unknown".
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
        return rest.send(order.reference(), order.notAfter().toString(), body).map(ProviderClient::toSendResult);
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
            if (status == 402 || status == 422) {
                ProviderPayment payment = readPayment(response);
                if (payment != null && "rejected".equals(payment.status())) {
                    return SendResult.rejected(payment.reason() == null ? "rejected by provider" : payment.reason());
                }
            }
            if (status == 412) {
                // refused for arriving after its deadline: not executed; the reconciler's lookup will say so
                throw new ProviderUnknownOutcomeException("provider refused a send that arrived after its deadline");
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
