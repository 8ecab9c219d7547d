package dev.ledgerline.transfers.hashing;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.HexFormat;

/** HMAC-SHA256 of a text under a secret, as lower-case hex: identifiers derived from client input under a key of ours. */
public final class HmacSha256 {

    private static final String ALGORITHM = "HmacSHA256";

    private final SecretKeySpec key;
    /**
     * Initialised with the key once and cloned per call, as {@link Sha256} clones its digest: a provider look-up by name
     * and a key set-up on every call were a tenth of a new transfer's hashing (bench/CPU-AB.md); a clone is never shared
     * between threads.
     */
    private final Mac prototype;

    public HmacSha256(String secret) {
        this.key = new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), ALGORITHM);
        this.prototype = newMac();
    }

    public String hex(String text) {
        return HexFormat.of().formatHex(mac().doFinal(text.getBytes(StandardCharsets.UTF_8)));
    }

    private Mac mac() {
        try {
            return (Mac) prototype.clone();
        } catch (CloneNotSupportedException e) {
            return newMac();
        }
    }

    private Mac newMac() {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(key);
            return mac;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every JDK", e);
        }
    }
}
