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
        String compact = raw.replace(" ", "");
        return compact.chars().allMatch(c -> c < 0x80) ? compact.toUpperCase(Locale.ROOT) : compact;
    }

    /** {@code null} when valid, otherwise why not. */
    static String problem(String iban) {
        if (iban.length() < 15 || iban.length() > 34) {
            return "must be 15 to 34 characters";
        }
        if (!iban.matches("[A-Z]{2}[0-9]{2}[A-Z0-9]+")) {
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
