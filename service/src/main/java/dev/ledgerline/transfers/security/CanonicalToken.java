package dev.ledgerline.transfers.security;

/**
 * Whether a compact JWS is written the one way RFC 7515 writes it: {@code header.payload.signature}, each
 * part unpadded base64url (RFC 4648 §5) in its shortest form. Lenient decoders also take trailing
 * {@code =} padding and a last character whose unused low bits are not zero; both decode to the same
 * bytes, so the signature still verifies, yet the text differs. Refusing them keeps one token one string.
 */
final class CanonicalToken {

    private CanonicalToken() {
    }

    static boolean isCanonical(String token) {
        if (token == null) {
            return false;
        }
        int parts = 0;
        int start = 0;
        for (int i = 0; i <= token.length(); i++) {
            if (i == token.length() || token.charAt(i) == '.') {
                if (!isCanonicalSegment(token, start, i)) {
                    return false;
                }
                parts++;
                start = i + 1;
            }
        }
        return parts == 3;
    }

    private static boolean isCanonicalSegment(String s, int from, int to) {
        int length = to - from;
        if (length == 0 || length % 4 == 1) {
            return false; // empty, or a length no byte sequence encodes to
        }
        int last = -1;
        for (int i = from; i < to; i++) {
            last = value(s.charAt(i));
            if (last < 0) {
                return false;
            }
        }
        // 2 characters left over carry 1 byte (4 unused bits), 3 carry 2 bytes (2 unused bits)
        return switch (length % 4) {
            case 2 -> (last & 0x0f) == 0;
            case 3 -> (last & 0x03) == 0;
            default -> true;
        };
    }

    private static int value(char c) {
        if (c >= 'A' && c <= 'Z') {
            return c - 'A';
        }
        if (c >= 'a' && c <= 'z') {
            return c - 'a' + 26;
        }
        if (c >= '0' && c <= '9') {
            return c - '0' + 52;
        }
        if (c == '-') {
            return 62;
        }
        if (c == '_') {
            return 63;
        }
        return -1;
    }
}
