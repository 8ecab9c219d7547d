package dev.ledgerline.transfers.api;

import java.util.Locale;
import java.util.regex.Pattern;

/** IBAN normalisation and the ISO 13616 mod-97 check. */
final class Iban {

    /** Compiled once: {@code String.matches} compiles its pattern on every call. */
    private static final Pattern SHAPE = Pattern.compile("[A-Z]{2}[0-9]{2}[A-Z0-9]+");

    private Iban() {
    }

    /**
     * Spaces removed, upper case — the printed form "DE89 3704 …" is accepted. Anything but ASCII letters
     * and digits is kept as it is (so it fails the check): upper-casing first would turn 'ſ' into 'S'.
     */
    static String normalise(String raw) {
        String compact = raw.replace(" ", "");
        return compact.chars().allMatch(c -> c < 0x80) ? compact.toUpperCase(Locale.ROOT) : compact;
    }

    /** {@code null} when valid, otherwise why not. */
    static String problem(String iban) {
        if (iban.length() < 15 || iban.length() > 34) {
            return "must be 15 to 34 characters";
        }
        if (!SHAPE.matcher(iban).matches()) {
            return "must be a country code, two check digits and letters or digits";
        }
        String rearranged = iban.substring(4) + iban.substring(0, 4);
        int remainder = 0;
        for (int i = 0; i < rearranged.length(); i++) {
            int value = Character.digit(rearranged.charAt(i), 36);
            remainder = value < 10 ? (remainder * 10 + value) % 97 : (remainder * 100 + value) % 97;
        }
        return remainder == 1 ? null : "fails the mod-97 check";
    }
}
