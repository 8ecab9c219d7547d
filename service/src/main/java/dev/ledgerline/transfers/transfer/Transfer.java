package dev.ledgerline.transfers.transfer;

import io.vertx.mutiny.sqlclient.Row;

import java.time.OffsetDateTime;
import java.util.UUID;

/** A transfer row as stored; {@code executeAt} is {@code null} for a transfer sent at once. */
public record Transfer(
        UUID id,
        String userId,
        String requestFingerprint,
        long amount,
        String currency,
        String destinationIban,
        String destinationName,
        String description,
        String providerReference,
        TransferStatus status,
        long version,
        String failureReason,
        OffsetDateTime createdAt,
        OffsetDateTime updatedAt,
        OffsetDateTime executeAt) {

    static Transfer from(Row row) {
        return new Transfer(
                row.getUUID("id"),
                row.getString("user_id"),
                row.getString("request_fingerprint"),
                row.getLong("amount"),
                row.getString("currency"),
                row.getString("destination_iban"),
                row.getString("destination_name"),
                row.getString("description"),
                row.getString("provider_reference"),
                TransferStatus.fromDb(row.getString("status")),
                row.getLong("version"),
                row.getString("failure_reason"),
                row.getOffsetDateTime("created_at"),
                row.getOffsetDateTime("updated_at"),
                row.getOffsetDateTime("execute_at"));
    }
}
