package dev.ledgerline.transfers.idempotency;

import dev.ledgerline.transfers.transfer.TransferRequest;
import org.junit.jupiter.api.Test;

import java.time.OffsetDateTime;
import java.time.ZoneOffset;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The canonical form: what counts as the same request, and that every stored fingerprint stays valid. The pinned
 * values are what the service stored from its first release on; a change to any of them would turn replays of
 * existing transfers into {@code 422}.
 */
class FingerprintTest {

    private static final String IBAN = "DE89370400440532013000";
    private static final String NFC_NAME = "Zo\u00eb \u00c5ngstr\u00f6m";
    private static final String NFD_NAME = "Zoe\u0308 A\u030angstro\u0308m";

    /** Stored before blank descriptions and composed names counted as the same request, and still stored so. */
    private static final String RENT = "f9683ce964ab1713cabc70d1c2bd8210d7c1c01d83a9f195005e8af908bff0bf";
    private static final String NO_DESCRIPTION = "0dc5bcc8c0f813e05010b53170f20f2fe615bf54c9de0b6895c03408185bd65e";
    private static final String COMPOSED_NAME = "624b968914a4d9500351f63be99873035511c6bced9416bd4c16fd10d3665de1";
    /** Stored before, for what is now the same request as one of the above. */
    private static final String EMPTY_DESCRIPTION_BEFORE = "5de876704c4b6f96ab617eb13972b4a56d84caa96a7c08c5ee3e030b3df0633f";
    private static final String DECOMPOSED_NAME_BEFORE = "9d96b823661647825c2a7432ee424a6a9bcb8202b30b35b81109e2fdce488af2";

    @Test
    void aRequestWhoseMeaningDidNotChangeKeepsItsFingerprintByteForByte() {
        assertEquals(RENT, Fingerprint.of(request("Ada Lovelace", "Rent November")));
        assertEquals(NO_DESCRIPTION, Fingerprint.of(request("Ada Lovelace", null)));
        assertEquals(COMPOSED_NAME, Fingerprint.of(request(NFC_NAME, "Rent November")));
    }

    @Test
    void aBlankDescriptionIsNoDescriptionAndADecomposedNameIsTheComposedOne() {
        assertEquals(NO_DESCRIPTION, Fingerprint.of(request("Ada Lovelace", "")));
        assertEquals(NO_DESCRIPTION, Fingerprint.of(request("Ada Lovelace", "   ")));
        assertEquals(COMPOSED_NAME, Fingerprint.of(request(NFD_NAME, "Rent November")));
    }

    @Test
    void aTransferStoredUnderAnEarlierFormIsStillTheSameRequest() {
        for (String description : new String[] {null, "", "  "}) {
            TransferRequest now = request("Ada Lovelace", description);
            assertTrue(Fingerprint.sameRequest(EMPTY_DESCRIPTION_BEFORE, Fingerprint.of(now), now), "description " + description);
        }
        for (String name : new String[] {NFC_NAME, NFD_NAME}) {
            TransferRequest now = request(name, "Rent November");
            assertTrue(Fingerprint.sameRequest(DECOMPOSED_NAME_BEFORE, Fingerprint.of(now), now), name);
        }
    }

    @Test
    void aDifferentRequestIsNeverTheSame() {
        TransferRequest rent = request("Ada Lovelace", "Rent November");
        for (String other : new String[] {NO_DESCRIPTION, EMPTY_DESCRIPTION_BEFORE, COMPOSED_NAME, DECOMPOSED_NAME_BEFORE}) {
            assertFalse(Fingerprint.sameRequest(other, Fingerprint.of(rent), rent), other);
        }
        TransferRequest composed = request(NFC_NAME, null);
        assertFalse(Fingerprint.sameRequest(COMPOSED_NAME, Fingerprint.of(composed), composed), "the description still counts");
        assertTrue(Fingerprint.earlierForms(rent).isEmpty(), "nothing else to try for an ASCII name and a description");
    }

    @Test
    void theExecutionTimeIsPartOfTheRequestAsTheInstantItNames() {
        OffsetDateTime at = OffsetDateTime.of(2031, 3, 1, 9, 0, 0, 0, ZoneOffset.UTC);
        String scheduled = Fingerprint.of(scheduled(at));
        assertFalse(scheduled.equals(RENT), "a scheduled request is not the one sent at once");
        assertFalse(scheduled.equals(Fingerprint.of(scheduled(at.plusSeconds(1)))), "another time is another request");
        assertEquals(scheduled, Fingerprint.of(scheduled(at.withOffsetSameInstant(ZoneOffset.ofHours(2)))),
                "the same instant written with another offset is the same request");
        assertFalse(Fingerprint.sameRequest(RENT, scheduled, scheduled(at)), "a row sent at once does not match a scheduled retry");
    }

    private static TransferRequest scheduled(OffsetDateTime at) {
        return new TransferRequest(1250, "EUR", new TransferRequest.Destination(IBAN, "Ada Lovelace"), "Rent November", at);
    }

    private static TransferRequest request(String name, String description) {
        return new TransferRequest(1250, "EUR", new TransferRequest.Destination(IBAN, name), description);
    }
}
