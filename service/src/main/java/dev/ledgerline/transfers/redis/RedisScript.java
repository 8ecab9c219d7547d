package dev.ledgerline.transfers.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * A Lua script of the service and its SHA-1 digest, the name Redis keeps it under once it has run it. {@link
 * RedisCommands#eval} sends the digest ({@code EVALSHA}) and the text only when Redis answers {@code NOSCRIPT}: a
 * restarted, failed-over or flushed Redis has forgotten the scripts it ran, and a {@code NOSCRIPT} answer means the
 * script did not run, so sending the text then cannot run it twice.
 */
public record RedisScript(String text, String sha1) {

    public static RedisScript of(String text) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8));
            return new RedisScript(text, HexFormat.of().formatHex(digest));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is part of every JDK", e);
        }
    }

    @Override
    public String toString() {
        return "script " + sha1;
    }
}
