package dev.ledgerline.transfers.transfer;

import io.vertx.mutiny.sqlclient.Row;

import java.time.OffsetDateTime;

/** One transition of a transfer, as appended to {@code transfer_events}. */
public record TransferEvent(long version, TransferStatus fromStatus, TransferStatus toStatus,
                            String actor, String reason, OffsetDateTime at) {

    public static TransferEvent from(Row row) {
        String from = row.getString("from_status");
        return new TransferEvent(
                row.getLong("version"),
                from == null ? null : TransferStatus.fromDb(from),
                TransferStatus.fromDb(row.getString("to_status")),
                row.getString("actor"),
                row.getString("reason"),
                row.getOffsetDateTime("at"));
    }
}
