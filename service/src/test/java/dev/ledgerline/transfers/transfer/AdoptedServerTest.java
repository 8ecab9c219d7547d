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
    /** The servers' {@code pg_postmaster_start_time()}: who answered. */
    private static final Instant FIRST = ADOPTED.minusSeconds(5);
    private static final Instant SECOND = ADOPTED.plusSeconds(35);
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
        answer(FIRST, ADOPTED);
        assertTrue(server.keeps(at(ADOPTED.plusSeconds(3))));
        now.addAndGet(VALID.toNanos() - 1);
        assertTrue(server.keeps(at(ADOPTED.plusSeconds(3))), "still within the look's validity");
        now.addAndGet(1);
        assertFalse(server.keeps(at(ADOPTED.plusSeconds(3))), "the look is too old: the server may have changed since");
        answer(FIRST, ADOPTED);
        assertTrue(server.keeps(at(ADOPTED.plusSeconds(3))), "a new look vouches again");
    }

    @Test
    void aRowFinalBeforeTheAdoptionOrWithinTheClockMarginIsNotVouchedFor() {
        answer(FIRST, ADOPTED);
        assertFalse(server.keeps(at(ADOPTED.minusSeconds(60))), "final on an earlier server: it may be lost");
        assertFalse(server.keeps(at(ADOPTED.plus(MARGIN))), "within the clocks' disagreement of the adoption");
        assertTrue(server.keeps(at(ADOPTED.plus(MARGIN).plusMillis(1))));
        assertFalse(server.keeps(null));
    }

    @Test
    void aLostConnectionOrAnUnansweredLookEndsWhatWasVouchedFor() {
        answer(FIRST, ADOPTED);
        server.unknown();
        assertFalse(server.keeps(at(ADOPTED.plusSeconds(60))));
        answer(FIRST, ADOPTED);
        answer(SECOND, null);
        assertFalse(server.keeps(at(ADOPTED.plusSeconds(60))), "another server, not adopted yet: nothing is vouched for");
        answer(FIRST, ADOPTED);
        answer(null, null);
        assertFalse(server.keeps(at(ADOPTED.plusSeconds(60))), "an answer that named no server");
    }

    @Test
    void aNewServerAdoptedLaterVouchesOnlyForRowsFinalAfterIt() {
        answer(FIRST, ADOPTED);
        Instant finalOnOldServer = ADOPTED.plusSeconds(30);
        assertTrue(server.keeps(at(finalOnOldServer)));
        answer(SECOND, ADOPTED.plusSeconds(40));
        assertFalse(server.keeps(at(finalOnOldServer)), "final before the new server was adopted: read it");
        assertTrue(server.keeps(at(ADOPTED.plusSeconds(43))));
    }

    @Test
    void aRowReadUnderAnAdoptionIsVouchedForWhileThatServerStaysAdoptedAndRecentlySeen() {
        assertNull(server.adoptedAt(), "nothing seen yet");
        assertFalse(server.stillAdopted(null));
        answer(FIRST, ADOPTED);
        Instant under = server.adoptedAt();
        assertEquals(ADOPTED, under);
        assertTrue(server.stillAdopted(under));
        answer(SECOND, ADOPTED.plusSeconds(40));
        assertFalse(server.stillAdopted(under), "another server adopted since the read");
        answer(FIRST, ADOPTED);
        now.addAndGet(VALID.toNanos());
        assertFalse(server.stillAdopted(under), "the look is too old");
    }

    @Test
    void anAnswerToAnEarlierQuestionThatArrivesLaterIsDropped() {
        long oldServerAsked = server.asking();
        now.addAndGet(1_000_000);
        answer(SECOND, ADOPTED.plusSeconds(40));
        // the old server's answer, to a question asked before, comes back last: it does not speak for the server now
        server.answered(FIRST, ADOPTED, oldServerAsked);
        assertEquals(ADOPTED.plusSeconds(40), server.adoptedAt());
        assertFalse(server.keeps(at(ADOPTED.plusSeconds(30))), "final on the old server after its adoption: read it");
    }

    @Test
    void aNotAdoptedFromTheServerSeenAdoptedIsASnapshotOlderThanTheAdoptionAndRenewsTheLook() {
        // the look and the adoption run at the same moment: the look, asked last, took its snapshot before the commit
        long adoptionAsked = server.asking();
        long lookAsked = server.asking();
        server.answered(FIRST, ADOPTED, adoptionAsked);
        server.answered(FIRST, null, lookAsked);
        assertEquals(ADOPTED, server.adoptedAt(), "an adopted server stays adopted");
        now.addAndGet(VALID.toNanos() - 1);
        server.answered(FIRST, null, server.asking());
        now.addAndGet(2);
        assertEquals(ADOPTED, server.adoptedAt(), "and the look that said so renewed its validity");
        server.answered(SECOND, null, server.asking());
        assertNull(server.adoptedAt(), "another server not adopted yet: nothing is vouched for");
    }

    @Test
    void anAnswerToAQuestionAskedBeforeAConnectionWasLostIsDropped() {
        long asked = server.asking();
        now.addAndGet(1_000_000);
        server.unknown();
        server.answered(FIRST, ADOPTED, asked);
        assertNull(server.adoptedAt(), "asked of the server that went away, perhaps");
        now.addAndGet(1_000_000);
        answer(FIRST, ADOPTED);
        assertEquals(ADOPTED, server.adoptedAt(), "asked after the loss: the server answering now");
    }

    @Test
    void theLookIsAsOldAsItsQuestion() {
        long asked = server.asking();
        now.addAndGet(VALID.toNanos() - 1);
        server.answered(FIRST, ADOPTED, asked);
        assertEquals(ADOPTED, server.adoptedAt());
        now.addAndGet(1);
        assertNull(server.adoptedAt(), "valid from when it was asked, not from when the answer came");
    }

    private void answer(Instant who, Instant adoptedAt) {
        server.answered(who, adoptedAt, server.asking());
    }

    private static OffsetDateTime at(Instant instant) {
        return instant.atOffset(ZoneOffset.ofHours(1));
    }
}
