package dev.ledgerline.transfers.transfer;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The column's spelling of every status, read back in the case the service writes and in any other. */
class TransferStatusTest {

    @Test
    void everyStatusReadsBackFromItsColumnSpellingInAnyCase() {
        for (TransferStatus status : TransferStatus.values()) {
            assertEquals(status.name().toLowerCase(), status.db());
            assertEquals(status, TransferStatus.fromDb(status.db()));
            assertEquals(status, TransferStatus.fromDb(status.name()));
            String mixed = Character.toUpperCase(status.db().charAt(0)) + status.db().substring(1);
            assertEquals(status, TransferStatus.fromDb(mixed));
        }
    }

    @Test
    void aSpellingOfNoStatusIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> TransferStatus.fromDb("settled"));
        assertThrows(IllegalArgumentException.class, () -> TransferStatus.fromDb(""));
    }
}
