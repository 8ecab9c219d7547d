package dev.ledgerline.transfers.api;

import com.fasterxml.jackson.databind.node.TextNode;
import dev.ledgerline.transfers.problem.Problem;
import org.junit.jupiter.api.Test;

import java.text.Normalizer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The IBAN and text checks answer every input as their first, plainer forms did (kept here as the reference: a regular
 * expression and {@code Character.digit} for the IBAN; NFC, the code-point count and the Unicode checks for every text),
 * on generated inputs mixing what each check looks at: spaces, lower case, non-ASCII letters that upper-case to ASCII,
 * digits, control, format and combining characters, surrogates.
 */
class FieldChecksTest {

    private static final Pattern SHAPE = Pattern.compile("[A-Z]{2}[0-9]{2}[A-Z0-9]+");
    private static final String IBAN_CHARS = "ABCDEZabcdez0123456789 ſé-";
    private static final String[] TEXT_PIECES = {"a", "Z", " ", "~", "é", "e\u0301", "\u0301", "\u0301\u0301\u0301",
            "\u202e", "\u200b", "\u00ad", "\u0007", "\t", "\u007f", "\u0085", "\ud83d\ude00", "\ud83d", "ſ", "Å", "A\u030a"};

    @Test
    void theIbanChecksAnswerAsTheReference() {
        Random random = new Random(7L);
        int valid = 0;
        for (int i = 0; i < 200_000; i++) {
            String raw = random.nextInt(4) == 0 ? validIban(random) : randomIban(random);
            assertEquals(referenceNormalise(raw), Iban.normalise(raw), raw);
            String normalised = Iban.normalise(raw);
            String problem = Iban.problem(normalised);
            assertEquals(referenceProblem(normalised), problem, normalised);
            valid += problem == null ? 1 : 0;
        }
        assertNull(Iban.problem(Iban.normalise("de89 3704 0044 0532 0130 00")));
        // the generator reaches the valid side often enough for the comparison to mean something
        assertTrue(valid > 10_000, "valid: " + valid);
    }

    @Test
    void theTextChecksAnswerAsTheReference() {
        Random random = new Random(11L);
        for (int i = 0; i < 100_000; i++) {
            StringBuilder text = new StringBuilder();
            int pieces = random.nextInt(8);
            for (int p = 0; p < pieces; p++) {
                // mostly printable ASCII, so the common case and its edges are both covered
                text.append(random.nextInt(3) > 0 ? String.valueOf((char) (0x1e + random.nextInt(0x63)))
                        : TEXT_PIECES[random.nextInt(TEXT_PIECES.length)]);
            }
            String value = text.toString();
            int max = 1 + random.nextInt(6);
            for (boolean composed : new boolean[]{false, true}) {
                for (boolean required : new boolean[]{false, true}) {
                    List<Problem.FieldError> errors = new ArrayList<>();
                    List<Problem.FieldError> expectedErrors = new ArrayList<>();
                    String checked = TransferRequestParser.text(TextNode.valueOf(value), "f", max, required, composed, errors);
                    String expected = referenceText(value, "f", max, required, composed, expectedErrors);
                    assertEquals(expected, checked, value);
                    assertEquals(expectedErrors, errors, value);
                }
            }
        }
    }

    private static String validIban(Random random) {
        StringBuilder bban = new StringBuilder();
        int length = 11 + random.nextInt(20);
        for (int i = 0; i < length; i++) {
            bban.append(random.nextInt(3) == 0 ? (char) ('A' + random.nextInt(26)) : (char) ('0' + random.nextInt(10)));
        }
        String country = "" + (char) ('A' + random.nextInt(26)) + (char) ('A' + random.nextInt(26));
        // check digits that make the mod-97 remainder 1
        int remainder = mod97(bban + country + "00");
        String check = String.format(Locale.ROOT, "%02d", 98 - remainder);
        String iban = country + check + bban;
        return random.nextBoolean() ? iban.toLowerCase(Locale.ROOT) : iban;
    }

    private static String randomIban(Random random) {
        StringBuilder s = new StringBuilder();
        int length = random.nextInt(40);
        for (int i = 0; i < length; i++) {
            s.append(IBAN_CHARS.charAt(random.nextInt(IBAN_CHARS.length())));
        }
        return s.toString();
    }

    private static int mod97(String digitsAndLetters) {
        int remainder = 0;
        for (int i = 0; i < digitsAndLetters.length(); i++) {
            int value = Character.digit(digitsAndLetters.charAt(i), 36);
            remainder = value < 10 ? (remainder * 10 + value) % 97 : (remainder * 100 + value) % 97;
        }
        return remainder;
    }

    private static String referenceNormalise(String raw) {
        String compact = raw.replace(" ", "");
        return compact.chars().allMatch(c -> c < 0x80) ? compact.toUpperCase(Locale.ROOT) : compact;
    }

    private static String referenceProblem(String iban) {
        if (iban.length() < 15 || iban.length() > 34) {
            return "must be 15 to 34 characters";
        }
        if (!SHAPE.matcher(iban).matches()) {
            return "must be a country code, two check digits and letters or digits";
        }
        return mod97(iban.substring(4) + iban.substring(0, 4)) == 1 ? null : "fails the mod-97 check";
    }

    private static String referenceText(String raw, String field, int maxLength, boolean required, boolean composed,
                                        List<Problem.FieldError> errors) {
        String value = composed ? Normalizer.normalize(raw.strip(), Normalizer.Form.NFC) : raw.strip();
        if (value.isEmpty()) {
            if (required) {
                errors.add(new Problem.FieldError(field, "must not be blank"));
            }
            return null;
        }
        if (value.codePointCount(0, value.length()) > maxLength) {
            errors.add(new Problem.FieldError(field, "must be at most " + maxLength + " characters"));
            return null;
        }
        // the Unicode checks themselves did not change: every text took them
        return TransferRequestParser.unicodeChecked(value, field, errors);
    }
}
