package dev.ledgerline.transfers.api;

import com.fasterxml.jackson.databind.annotation.JsonSerialize;
import dev.ledgerline.transfers.transfer.Transfer;
import dev.ledgerline.transfers.transfer.TransferRequest;
import jakarta.ws.rs.core.EntityTag;

import java.time.OffsetDateTime;
import java.util.UUID;

/** The transfer as clients see it (openapi.yaml {@code Transfer}), written by {@link TransferViewWriter}. */
@JsonSerialize(using = TransferViewWriter.class)
public record TransferView(UUID id, String status, long amount, String currency, TransferRequest.Destination destination,
                           String description, String providerReference, long version, String failureReason,
                           OffsetDateTime createdAt, OffsetDateTime updatedAt, OffsetDateTime executeAt) {

    static TransferView of(Transfer t) {
        return new TransferView(t.id(), t.status().db(), t.amount(), t.currency(),
                new TransferRequest.Destination(t.destinationIban(), t.destinationName()), t.description(),
                t.providerReference(), t.version(), t.failureReason(), t.createdAt(), t.updatedAt(), t.executeAt());
    }

    /** A strong validator: the version changes with every transition. */
    static EntityTag etag(Transfer t) {
        return new EntityTag(Long.toString(t.version()));
    }

    /** The same validator as a client may send it back, marked weak. */
    static EntityTag weakEtag(Transfer t) {
        return new EntityTag(Long.toString(t.version()), true);
    }
}
