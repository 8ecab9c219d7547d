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

    /** {@link TransferSql#COLUMNS}, which every statement that answers transfers selects or returns. */
    private static final Columns COLUMNS = new Columns(TransferSql.COLUMNS);

    static Transfer from(Row row) {
        int c = COLUMNS.base(row);
        if (c < 0) {
            return byName(row);
        }
        return new Transfer(
                row.getUUID(c),
                row.getString(c + 1),
                row.getString(c + 2),
                row.getLong(c + 3),
                row.getString(c + 4),
                row.getString(c + 5),
                row.getString(c + 6),
                row.getString(c + 7),
                row.getString(c + 8),
                TransferStatus.fromDb(row.getString(c + 9)),
                row.getLong(c + 10),
                row.getString(c + 11),
                row.getOffsetDateTime(c + 12),
                row.getOffsetDateTime(c + 13),
                row.getOffsetDateTime(c + 14));
    }

    /** {@link #from} for a row whose columns are not {@link TransferSql#COLUMNS} in that order. */
    static Transfer byName(Row row) {
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
