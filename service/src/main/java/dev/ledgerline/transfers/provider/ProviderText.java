package dev.ledgerline.transfers.provider;

/**
 * Text that comes from the provider (a rejection's {@code reason}) made safe to store and to show: control
 * characters removed (a NUL cannot be stored by PostgreSQL at all, and would fail every statement that carries
 * it), line breaks and tabs turned into single spaces, and the result cut to {@link #MAX_LENGTH} characters
 * without splitting a surrogate pair. {@link ProviderClient} applies it before any provider string leaves it.
 */
public final class ProviderText {

    /** The longest provider string the service keeps. */
    public static final int MAX_LENGTH = 200;

    private ProviderText() {
    }

    /** {@code text} cleaned and bounded; {@code null} when nothing readable is left. */
    public static String clean(String text) {
        if (text == null) {
            return null;
        }
        StringBuilder out = new StringBuilder(Math.min(text.length(), MAX_LENGTH));
        boolean space = false;
        for (int i = 0; i < text.length() && out.length() < MAX_LENGTH; ) {
            int c = text.codePointAt(i);
            i += Character.charCount(c);
            if (Character.isWhitespace(c) || Character.isSpaceChar(c)) {
                space = out.length() > 0;
                continue;
            }
            // a lone surrogate is not text either: it cannot be encoded as UTF-8
            if (Character.isISOControl(c) || Character.getType(c) == Character.SURROGATE) {
                continue;
            }
            int needed = (space ? 1 : 0) + Character.charCount(c);
            if (out.length() + needed > MAX_LENGTH) {
                break;
            }
            if (space) {
                out.append(' ');
                space = false;
            }
            out.appendCodePoint(c);
        }
        return out.length() == 0 ? null : out.toString();
    }
}
