package dev.ledgerline.transfers.api;

import java.util.Locale;

/** IBAN normalisation and the ISO 13616 mod-97 check. */
final class Iban {

    private Iban() {
    }

    /**
     * Spaces removed, upper case — the printed form "DE89 3704 …" is accepted. Anything but ASCII letters
     * and digits is kept as it is (so it fails the check): upper-casing first would turn 'ſ' into 'S'.
     */
    static String normalise(String raw) {
        boolean spaces = false;
        boolean lower = false;
        boolean ascii = true;
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            spaces |= c == ' ';
            lower |= c >= 'a' && c <= 'z';
            ascii &= c < 0x80;
        }
        if (!spaces && !(lower && ascii)) {
            return raw; // compact, and no ASCII lower case to raise (a text with more than ASCII is never upper-cased)
        }
        String compact = spaces ? raw.replace(" ", "") : raw;
        return ascii ? compact.toUpperCase(Locale.ROOT) : compact;
    }

    /** {@code null} when valid, otherwise why not. */
    static String problem(String iban) {
        int length = iban.length();
        if (length < 15 || length > 34) {
            return "must be 15 to 34 characters";
        }
        // the shape [A-Z]{2}[0-9]{2}[A-Z0-9]+
        for (int i = 0; i < length; i++) {
            char c = iban.charAt(i);
            boolean letter = c >= 'A' && c <= 'Z';
            boolean digit = c >= '0' && c <= '9';
            if (i < 2 ? !letter : i < 4 ? !digit : !(letter || digit)) {
                return "must be a country code, two check digits and letters or digits";
            }
        }
        // the first four characters moved to the end, each letter read as two digits (A = 10 … Z = 35)
        int remainder = 0;
        for (int k = 0; k < length; k++) {
            char c = iban.charAt((k + 4) % length);
            int value = c <= '9' ? c - '0' : c - 'A' + 10;
            remainder = value < 10 ? (remainder * 10 + value) % 97 : (remainder * 100 + value) % 97;
        }
        return remainder == 1 ? null : "fails the mod-97 check";
    }
}
