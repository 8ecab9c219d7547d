package dev.ledgerline.transfers.hashing;

/**
 * A long text as a hash-map key that is cheap to look up: its hash reads at most {@value #SAMPLES} of its characters,
 * evenly spaced, and its length, where {@link String#hashCode} reads every character of a string made afresh for each
 * request (a bearer token of about 800 characters, whose signature makes the sampled characters differ from token to
 * token). Equal only to a key of exactly the same text, so a collision costs a comparison, never a wrong answer.
 */
public final class LongText {

    /** Characters the hash reads at most. */
    static final int SAMPLES = 32;

    private final String text;
    private final int hash;

    private LongText(String text) {
        this.text = text;
        int n = text.length();
        int h = n;
        int step = Math.max(1, n / SAMPLES);
        // from the end: tokens share their first characters (the header) and differ in their last (the signature)
        for (int i = n - 1, taken = 0; i >= 0 && taken < SAMPLES; i -= step, taken++) {
            h = 31 * h + text.charAt(i);
        }
        this.hash = h;
    }

    public static LongText of(String text) {
        return new LongText(text);
    }

    public String text() {
        return text;
    }

    @Override
    public int hashCode() {
        return hash;
    }

    @Override
    public boolean equals(Object other) {
        return this == other || other instanceof LongText o && o.hash == hash && o.text.equals(text);
    }

    @Override
    public String toString() {
        return "LongText[" + text.length() + " chars]";
    }
}
