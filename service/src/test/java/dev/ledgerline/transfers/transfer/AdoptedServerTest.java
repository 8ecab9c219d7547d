package dev.ledgerline.transfers.transfer;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link AdoptedServer} vouches for a final row only when it became final on the adopted server after its adoption
 * (by more than the clock margin), and only while this instance's last look at that server is recent and no
 * connection was lost since.
 */
class AdoptedServerTest {

    private static final Instant ADOPTED = Instant.parse("2026-12-05T10:00:00Z");
    private static final Duration VALID = Duration.ofSeconds(3);
    private static final Duration MARGIN = Duration.ofSeconds(2);

    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private final AdoptedServer server = new AdoptedServer(VALID, MARGIN, now::get);

    @Test
    void nothingIsVouchedForBeforeTheFirstLook() {
        assertFalse(server.keeps(at(ADOPTED.plusSeconds(60))));
    }

    @Test
    void aRowFinalAfterTheAdoptionPlusTheMarginIsKeptWhileTheLookIsRecent() {
        server.answered(ADOPTED);
        assertTrue(server.keeps(at(ADOPTED.plusSeconds(3))));
        now.addAndGet(VALID.toNanos() - 1);
        assertTrue(server.keeps(at(ADOPTED.plusSeconds(3))), "still within the look's validity");
        now.addAndGet(1);
        assertFalse(server.keeps(at(ADOPTED.plusSeconds(3))), "the look is too old: the server may have changed since");
        server.answered(ADOPTED);
        assertTrue(server.keeps(at(ADOPTED.plusSeconds(3))), "a new look vouches again");
    }

    @Test
    void aRowFinalBeforeTheAdoptionOrWithinTheClockMarginIsNotVouchedFor() {
        server.answered(ADOPTED);
        assertFalse(server.keeps(at(ADOPTED.minusSeconds(60))), "final on an earlier server: it may be lost");
        assertFalse(server.keeps(at(ADOPTED.plus(MARGIN))), "within the clocks' disagreement of the adoption");
        assertTrue(server.keeps(at(ADOPTED.plus(MARGIN).plusMillis(1))));
        assertFalse(server.keeps(null));
    }

    @Test
    void aLostConnectionOrAnUnansweredLookEndsWhatWasVouchedFor() {
        server.answered(ADOPTED);
        server.unknown();
        assertFalse(server.keeps(at(ADOPTED.plusSeconds(60))));
        server.answered(ADOPTED);
        server.answered(null);
        assertFalse(server.keeps(at(ADOPTED.plusSeconds(60))), "an adoption another instance was committing: unknown");
    }

    @Test
    void aNewServerAdoptedLaterVouchesOnlyForRowsFinalAfterIt() {
        server.answered(ADOPTED);
        Instant finalOnOldServer = ADOPTED.plusSeconds(30);
        assertTrue(server.keeps(at(finalOnOldServer)));
        server.answered(ADOPTED.plusSeconds(40));
        assertFalse(server.keeps(at(finalOnOldServer)), "final before the new server was adopted: read it");
        assertTrue(server.keeps(at(ADOPTED.plusSeconds(43))));
    }

    @Test
    void aRowReadUnderAnAdoptionIsVouchedForWhileThatServerStaysAdoptedAndRecentlySeen() {
        assertNull(server.adoptedAt(), "nothing seen yet");
        assertFalse(server.stillAdopted(null));
        server.answered(ADOPTED);
        Instant under = server.adoptedAt();
        assertEquals(ADOPTED, under);
        assertTrue(server.stillAdopted(under));
        server.answered(ADOPTED.plusSeconds(40));
        assertFalse(server.stillAdopted(under), "another server adopted since the read");
        server.answered(ADOPTED);
        now.addAndGet(VALID.toNanos());
        assertFalse(server.stillAdopted(under), "the look is too old");
    }

    private static OffsetDateTime at(Instant instant) {
        return instant.atOffset(ZoneOffset.ofHours(1));
    }
}
