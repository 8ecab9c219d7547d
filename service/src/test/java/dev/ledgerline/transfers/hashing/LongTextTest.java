package dev.ledgerline.transfers.hashing;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** {@link LongText} finds a key only by exactly the same text, however the sampled hash falls. */
class LongTextTest {

    @Test
    void theSameTextMadeAfreshFindsTheKeyAndAnyOtherTextDoesNot() {
        String token = "eyJhbGciOiJSUzI1NiJ9." + "x".repeat(600) + ".signature-" + "s".repeat(200);
        Map<LongText, String> map = new HashMap<>();
        map.put(LongText.of(token), "verified");
        assertEquals("verified", map.get(LongText.of(new String(token.toCharArray()))));
        // one character changed where the hash does not look: same hash, still another key
        String unsampled = flip(token, 1);
        assertEquals(LongText.of(token).hashCode(), LongText.of(unsampled).hashCode(), "this position is not sampled");
        assertNull(map.get(LongText.of(unsampled)));
        assertNotEquals(LongText.of(token), LongText.of(unsampled));
        // and where it does
        assertNull(map.get(LongText.of(flip(token, token.length() - 1))));
        assertNull(map.get(LongText.of(token + "x")));
    }

    @Test
    void shortAndEmptyTextsAreKeysToo() {
        assertEquals(LongText.of(""), LongText.of(""));
        assertEquals(LongText.of("ab"), LongText.of("ab"));
        assertNotEquals(LongText.of("ab"), LongText.of("ba"));
        assertEquals("ab", LongText.of("ab").text());
    }

    private static String flip(String s, int at) {
        char[] chars = s.toCharArray();
        chars[at] = chars[at] == 'a' ? 'b' : 'a';
        return new String(chars);
    }
}
