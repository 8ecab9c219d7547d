package dev.ledgerline.transfers.idempotency;

import dev.ledgerline.transfers.transfer.Transfer;
import dev.ledgerline.transfers.transfer.TransferStatus;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The Redis entry formats: what goes in comes out, and anything else is "not ours" (the database decides). */
class IdempotencyEntryTest {

    private static final String FP = "a".repeat(64);

    @Test
    void aFinalEntryKeepsTheWholeTransferExactly() {
        OffsetDateTime created = OffsetDateTime.of(2026, 11, 29, 23, 59, 58, 123_456_000, ZoneOffset.UTC);
        for (Transfer t : new Transfer[] {
                transfer(TransferStatus.SENT, "rent | November \"2026\" ünïcödé", null, created),
                transfer(TransferStatus.FAILED, null, "insufficient funds | account closed", created.withOffsetSameInstant(ZoneOffset.ofHours(2))),
                transfer(TransferStatus.CANCELLED, null, null, created, created.plusDays(3))}) {
            IdempotencyEntry decoded = IdempotencyEntry.decode(IdempotencyEntry.finalState(t).encode());
            assertEquals(IdempotencyEntry.Kind.FINAL, decoded.kind());
            assertEquals(t, decoded.last());
            assertEquals(FP, decoded.fingerprint());
        }
    }

    @Test
    void aFinalEntryWithItsBodyAndResponseKeepsThemAndTheTransferExactly() {
        Transfer t = transfer(TransferStatus.SENT, "a | b 1:2 \"c\"", null, OffsetDateTime.now(ZoneOffset.UTC));
        String body = "{\"amount\": 1250, \"description\": \"a | b 1:2 \\\"c\\\"\", \"name\": \"Zoë\"}";
        String response = "{\"id\":\"" + t.id() + "\",\"status\":\"sent\",\"description\":\"a | b 1:2\"}";
        IdempotencyEntry decoded = IdempotencyEntry.decode(IdempotencyEntry.finalState(t, "stamp1", body, response).encode());
        assertEquals(IdempotencyEntry.Kind.FINAL, decoded.kind());
        assertEquals(t, decoded.last());
        assertEquals(FP, decoded.fingerprint());
        assertEquals(response, decoded.response());
        assertTrue(decoded.keeps(body.getBytes(StandardCharsets.UTF_8), "stamp1"), "the very bytes under the same stamp");
        assertFalse(decoded.keeps(body.getBytes(StandardCharsets.UTF_8), "stamp2"), "not under another stamp");
        assertFalse(decoded.keeps((body + " ").getBytes(StandardCharsets.UTF_8), "stamp1"), "not one byte more");
        assertFalse(decoded.keeps(body.replace("ë", "e\u0308").getBytes(StandardCharsets.UTF_8), "stamp1"),
                "not an equal text in other bytes: the canonical path decides those");
        assertFalse(decoded.keeps(null, "stamp1"), "not bytes that cannot stand for the request");
        assertFalse(IdempotencyEntry.decode(IdempotencyEntry.finalState(t).encode()).keeps(body.getBytes(StandardCharsets.UTF_8), "stamp1"),
                "an entry without a body keeps none");
    }

    @Test
    void aGarbledEntryWithBodyAndResponseIsNotOurs() {
        Transfer t = transfer(TransferStatus.SENT, null, null, OffsetDateTime.now(ZoneOffset.UTC));
        String good = IdempotencyEntry.finalState(t, "s", "{}", "{\"id\":1}").encode();
        for (String garbage : new String[] {good.replace("|1:s", "|9:s"), good.replace("|1:s", "|-1:s"), good.replace("|1:s", "|x:s"),
                good.substring(0, good.indexOf("{\"id\":\"")), good.replace("\"sent\"", "\"processing\"")}) {
            assertNull(IdempotencyEntry.decode(garbage), garbage);
        }
    }

    @Test
    void onlyAFinalTransferMakesAFinalEntry() {
        Transfer moving = transfer(TransferStatus.PROCESSING, null, null, OffsetDateTime.now(ZoneOffset.UTC));
        assertThrows(IllegalArgumentException.class, () -> IdempotencyEntry.finalState(moving));
        assertEquals(IdempotencyEntry.Kind.COMPLETED, IdempotencyEntry.of(moving).kind());
    }

    @Test
    void markersAndCompletedEntriesRoundTrip() {
        UUID id = UUID.randomUUID();
        // entries written before the creation time was part of them still decode
        assertEquals(IdempotencyEntry.completed(FP, id, null), IdempotencyEntry.decode("C|" + FP + "|" + id));
        Instant created = Instant.ofEpochMilli(1_790_000_000_123L);
        IdempotencyEntry withTime = IdempotencyEntry.completed(FP, id, created);
        assertEquals("C|" + FP + "|" + id + "|1790000000123", withTime.encode());
        assertEquals(withTime, IdempotencyEntry.decode(withTime.encode()));
        assertEquals(IdempotencyEntry.inFlight("tok", FP), IdempotencyEntry.decode("P|tok|" + FP));
    }

    @Test
    void anythingElseIsNotOurs() {
        String sent = IdempotencyEntry.finalState(transfer(TransferStatus.SENT, null, null, OffsetDateTime.now(ZoneOffset.UTC))).encode();
        for (String garbage : new String[] {"", "C|x", "C|" + FP + "|not-a-uuid", "C|" + FP + "|" + UUID.randomUUID() + "|not-a-time", "X|a|b", "F|" + FP + "|{not json",
                "F|" + FP + "|{}", sent.replace("\"sent\"", "\"processing\""), sent.replace("F|" + FP, "F|" + "b".repeat(64))}) {
            assertNull(IdempotencyEntry.decode(garbage), garbage);
        }
    }

    @Test
    void aFinalEntryWrittenBeforeSchedulingDecodesAsSentAtOnce() {
        Transfer sent = transfer(TransferStatus.SENT, null, null, OffsetDateTime.now(ZoneOffset.UTC));
        String before = IdempotencyEntry.finalState(sent).encode().replace(",\"executeAt\":null", "");
        assertEquals(sent, IdempotencyEntry.decode(before).last());
    }

    private static Transfer transfer(TransferStatus status, String description, String reason, OffsetDateTime at) {
        return transfer(status, description, reason, at, null);
    }

    private static Transfer transfer(TransferStatus status, String description, String reason, OffsetDateTime at,
                                     OffsetDateTime executeAt) {
        return new Transfer(UUID.randomUUID(), "alice", FP, 1250, "EUR", "DE89370400440532013000", "Ada Lovelace",
                description, "ll_" + "0".repeat(32), status, status.isTerminal() ? 2 : 1, reason, at, at.plusSeconds(1), executeAt);
    }
}
