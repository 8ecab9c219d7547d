package dev.ledgerline.transfers.idempotency;

import dev.ledgerline.transfers.problem.ProblemException;
import dev.ledgerline.transfers.problem.ProblemType;

/**
 * A parsed {@code Idempotency-Key} header: 1–255 printable ASCII characters, sent either as an RFC 8941
 * sf-string ({@code "…"}, with {@code \"} and {@code \\} escapes) or bare. A bare key may use the
 * RFC 9110 token characters plus {@code :} and {@code /}, which covers UUIDs, ULIDs and the like.
 */
public record IdempotencyKey(String value) {

    public static final int MAX_LENGTH = 255;

    public static IdempotencyKey parse(String header) {
        if (header == null || header.isEmpty()) {
            throw new ProblemException(ProblemType.IDEMPOTENCY_KEY_MISSING,
                    "Send an Idempotency-Key header (1-255 printable ASCII characters) with every POST.");
        }
        try {
            return of(header);
        } catch (IllegalArgumentException e) {
            throw invalid(e.getMessage());
        }
    }

    /**
     * A key named outside its header, e.g. the {@code idempotencyKey} query parameter of the lookup: the header's
     * rules and forms exactly, so a client passes the value it sent in {@code Idempotency-Key} and finds the same
     * key. An {@link IllegalArgumentException} whose message says, as a clause, why {@code raw} is no key.
     */
    public static IdempotencyKey of(String raw) {
        String value = raw.length() >= 2 && raw.charAt(0) == '"' ? unquote(raw) : bare(raw);
        if (value.isEmpty() || value.length() > MAX_LENGTH) {
            throw new IllegalArgumentException("it must be 1-255 characters long");
        }
        return new IdempotencyKey(value);
    }

    private static String bare(String header) {
        for (int i = 0; i < header.length(); i++) {
            if (!isTokenChar(header.charAt(i))) {
                throw new IllegalArgumentException("character " + (i + 1) + " is not allowed in an unquoted key; quote the key as an sf-string");
            }
        }
        return header;
    }

    private static String unquote(String header) {
        if (header.charAt(header.length() - 1) != '"') {
            throw new IllegalArgumentException("a quoted key must end with a quote");
        }
        StringBuilder out = new StringBuilder(header.length());
        for (int i = 1; i < header.length() - 1; i++) {
            char c = header.charAt(i);
            if (c == '\\') {
                if (i + 1 >= header.length() - 1) {
                    throw new IllegalArgumentException("a backslash must escape a quote or a backslash");
                }
                char next = header.charAt(++i);
                if (next != '"' && next != '\\') {
                    throw new IllegalArgumentException("a backslash must escape a quote or a backslash");
                }
                out.append(next);
            } else if (c == '"') {
                throw new IllegalArgumentException("a quote inside a quoted key must be escaped");
            } else if (c < 0x20 || c > 0x7e) {
                throw new IllegalArgumentException("character " + i + " is not printable ASCII");
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    private static boolean isTokenChar(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                || "!#$%&'*+-.^_`|~:/".indexOf(c) >= 0;
    }

    private static ProblemException invalid(String why) {
        return new ProblemException(ProblemType.IDEMPOTENCY_KEY_INVALID, "The Idempotency-Key header is not valid: " + why + ".");
    }

    /** Never log the key itself. */
    @Override
    public String toString() {
        return "IdempotencyKey[" + value.length() + " chars]";
    }
}
