package dev.ledgerline.transfers.contract;

import dev.ledgerline.client.ApiClient;
import dev.ledgerline.client.ApiException;
import dev.ledgerline.client.ApiResponse;
import dev.ledgerline.client.api.TransfersApi;
import dev.ledgerline.client.model.Transfer;
import dev.ledgerline.client.model.TransferEvents;
import dev.ledgerline.client.model.TransferRequest;
import dev.ledgerline.client.model.TransferRequestDestination;
import dev.ledgerline.client.model.TransferStatus;
import dev.ledgerline.transfers.support.Api;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The contract is usable as it stands: a Java client generated from {@code openapi.yaml} at build time
 * (openapi-generator, {@code native} library) creates a transfer and reads it back from the running
 * service, typed end to end, with no hand-written HTTP.
 */
@QuarkusTest
class GeneratedClientTest {

    @TestHTTPResource("/")
    URI service;

    private TransfersApi client(String token) {
        ApiClient api = new ApiClient();
        api.updateBaseUri(service.toString().replaceAll("/$", ""));
        api.setReadTimeout(Duration.ofSeconds(20)); // above the longest Prefer: wait below (10 s)
        api.setRequestInterceptor(request -> request.header("Authorization", "Bearer " + token));
        return new TransfersApi(api);
    }

    @Test
    void createsATransferAndReadsItBackThroughTheGeneratedClient() throws Exception {
        TransfersApi transfers = client(Api.writer("generated-client"));
        TransferRequest request = new TransferRequest()
                .amount(4711L)
                .currency(TransferRequest.CurrencyEnum.EUR)
                .destination(new TransferRequestDestination().iban("DE89 3704 0044 0532 0130 00").name(" Ada Lovelace "))
                .description("Through the generated client");

        String key = Api.newKey();
        ApiResponse<Transfer> created = transfers.createTransferWithHttpInfo(key, request, null);
        assertEquals(201, created.getStatusCode());
        Transfer transfer = created.getData();
        assertEquals(List.of("/v1/transfers/" + transfer.getId()), created.getHeaders().get("location"));
        assertEquals(TransferStatus.PENDING, transfer.getStatus());
        assertEquals(4711L, transfer.getAmount());
        assertEquals("DE89370400440532013000", transfer.getDestination().getIban());
        assertEquals("Ada Lovelace", transfer.getDestination().getName());
        assertEquals(0L, transfer.getVersion());

        // a long poll through the generated client: held until the transfer is final
        Transfer read = transfers.getTransfer(transfer.getId(), null, "wait=10");
        assertEquals(TransferStatus.SENT, read.getStatus());
        assertEquals(transfer.getId(), read.getId());
        assertEquals("Through the generated client", read.getDescription());
        assertEquals(transfer.getProviderReference(), read.getProviderReference());
        assertNull(read.getFailureReason());

        TransferEvents history = transfers.getTransferEvents(transfer.getId());
        assertEquals(transfer.getId(), history.getTransferId());
        assertEquals(TransferStatus.PENDING, history.getEvents().get(0).getToStatus());
        assertNull(history.getEvents().get(0).getFromStatus());

        Transfer replayed = transfers.createTransfer(key, request, null);
        assertEquals(transfer.getId(), replayed.getId());
    }

    @Test
    void anErrorArrivesAsTheDocumentedProblem() {
        TransfersApi transfers = client(Api.writer("generated-client"));
        ApiException e = assertThrows(ApiException.class, () -> transfers.getTransfer(java.util.UUID.randomUUID(), null, null));
        assertEquals(404, e.getCode());
        assertTrue(e.getResponseBody().contains("https://ledgerline.dev/problems/not-found"), e.getResponseBody());
    }
}
