package dev.ledgerline.transfers.config;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The checked-in dev public key (the dev-stack module's dev-jwt/jwt-public.pem), so that prod can recognise and refuse it
 * wherever it is copied to. Its private half signs the dev tokens in dev and test only.
 */
final class DevKey {

    static final String PUBLIC_KEY_BODY = "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAxTIabC73Nb3quFDyDr/NW1Gj+W6wvO4QhCn/+goa3PaZ9hQDptv+SCnSGoF13t5NacCTw2WRPksjrQNIUcXwu2AT1yPOhe+axRXN4KwZEY6eGCiQ86o0cKv0PXIhNoqZ80marDpbTNQH4KUrwrqtswRmw3Uq5uuVIeN0y6Obq4xepgO8gxi5oLiL2sL70yz9WvKpO1fvWibokRa+HHN92vKOH7oZ6u4mA1XyB7KhLnpfUa+NWLedGnXYwHhrj5fGoIq9SQ+NASoqO9r+MC83weUxcocwF5NtnTtzrACyNQ3hjIzXoDCatME+YPXK/5qcd8vglSP3fqjN0oXZ5+ZF7QIDAQAB";

    private DevKey() {
    }

    /** Start-up only: does the key at this location (file or class path) or this inline key equal the dev key? */
    static boolean isDevKey(String locationOrInline) {
        if (locationOrInline == null || locationOrInline.isBlank()) {
            return false;
        }
        if (strip(locationOrInline).contains(PUBLIC_KEY_BODY)) {
            return true;
        }
        String location = locationOrInline.replaceFirst("^file:", "");
        try {
            Path path = Path.of(location);
            if (Files.isRegularFile(path)) {
                return strip(Files.readString(path)).contains(PUBLIC_KEY_BODY);
            }
            String resource = location.replaceFirst("^classpath:", "");
            try (InputStream in = Thread.currentThread().getContextClassLoader().getResourceAsStream(resource)) {
                return in != null && strip(new String(in.readAllBytes())).contains(PUBLIC_KEY_BODY);
            }
        } catch (IOException | RuntimeException unreadable) {
            return false;
        }
    }

    private static String strip(String pem) {
        return pem.replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
    }
}
