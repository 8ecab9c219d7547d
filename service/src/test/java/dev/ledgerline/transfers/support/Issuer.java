package dev.ledgerline.transfers.support;

import io.smallrye.jwt.build.Jwt;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.util.Base64;
import java.util.Set;

/**
 * The one place tests sign tokens themselves. A packaged service in the prod profile trusts one issuer's key:
 * {@link #fresh()} makes a key pair standing in for the real issuer and writes its public half to a PEM file for
 * {@code MP_JWT_VERIFY_PUBLICKEY_LOCATION}, and {@link #token} signs with the issuer and audience the prod profile
 * verifies. The {@code @QuarkusTest} service trusts the checked-in dev key pair instead; tests that build a token of
 * an odd shape on purpose sign it with {@link #devKey()}.
 */
public final class Issuer implements AutoCloseable {

    /** The issuer and audience the prod profile verifies ({@code mp.jwt.verify.issuer}, {@code mp.jwt.verify.audiences}). */
    public static final String ISSUER = "https://ledgerline.dev/issuer";
    public static final String AUDIENCE = "ledgerline-transfers";
    /** The groups of a client that creates transfers and reads its own. */
    public static final Set<String> WRITER = Set.of("transfers.write", "transfers.read");
    /** Longer than any IT runs, so no token expires under a test still using it. */
    public static final Duration LIFETIME = Duration.ofHours(1);

    private final KeyPair keys;
    private final Path publicKey;

    private Issuer(KeyPair keys, Path publicKey) {
        this.keys = keys;
        this.publicKey = publicKey;
    }

    /** A fresh RSA key pair standing in for the real token issuer, its public key written to a temporary PEM file. */
    public static Issuer fresh() throws Exception {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
        generator.initialize(2048);
        KeyPair keys = generator.generateKeyPair();
        Path file = Files.createTempFile("issuer", ".pem");
        Files.writeString(file, "-----BEGIN PUBLIC KEY-----\n"
                + Base64.getMimeEncoder().encodeToString(keys.getPublic().getEncoded()) + "\n-----END PUBLIC KEY-----\n");
        return new Issuer(keys, file);
    }

    /** The PEM file of the public key, for the service to verify tokens with. */
    public Path publicKey() {
        return publicKey;
    }

    /** A token for {@code subject} in {@code groups}, signed by this issuer, valid for {@link #LIFETIME}. */
    public String token(String subject, Set<String> groups) {
        return Jwt.issuer(ISSUER).audience(AUDIENCE).subject(subject).groups(groups).expiresIn(LIFETIME).sign(keys.getPrivate());
    }

    /** A token of a client that creates transfers and reads its own ({@link #WRITER}). */
    public String writer(String subject) {
        return token(subject, WRITER);
    }

    /** Deletes the public key's file. */
    @Override
    public void close() throws IOException {
        Files.deleteIfExists(publicKey);
    }

    /** The private half of the checked-in dev key pair (the dev stack's dev-jwt/), which the test profile's service trusts. */
    public static PrivateKey devKey() throws Exception {
        String pem = new String(devKeyPem("jwt-private.pem"), StandardCharsets.US_ASCII)
                .replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
        return KeyFactory.getInstance("RSA").generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(pem)));
    }

    /** A PEM file of the checked-in dev key pair ({@code jwt-public.pem} or {@code jwt-private.pem}), as the dev stack ships it. */
    public static byte[] devKeyPem(String name) throws IOException {
        try (InputStream in = Issuer.class.getClassLoader().getResourceAsStream("dev-jwt/" + name)) {
            if (in == null) {
                throw new IOException("dev-jwt/" + name + " is not on the class path (the dev-stack module provides it)");
            }
            return in.readAllBytes();
        }
    }

    /** The dev public key copied to a temporary file, for a packaged service that must refuse it. */
    public static Path devPublicKeyFile() throws IOException {
        Path file = Files.createTempFile("dev-jwt-public", ".pem");
        Files.write(file, devKeyPem("jwt-public.pem"));
        file.toFile().deleteOnExit();
        return file;
    }
}
