package dev.ledgerline.transfers.provider;

import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManagerFactory;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The {@link RecordingProvider} over HTTPS that requires a client certificate, as a provider taking mutual TLS does.
 * Its certificate and the client's are made here by the JDK's {@code keytool}, each self-signed, each side trusting
 * only the other's; the service is configured the way docs/provider.md tells an operator to
 * ({@code quarkus.rest-client.provider.tls-configuration-name} and {@code quarkus.tls.provider.*}).
 */
public class MutualTlsProvider extends RecordingProvider {

    static final String CLIENT = "CN=ledgerline-test-client,O=Ledgerline";
    private static final String PASSWORD = "changeit-" + Long.toHexString(System.nanoTime());

    private Path dir;

    @Override
    protected HttpServer create() throws IOException, GeneralSecurityException {
        dir = Files.createTempDirectory("provider-tls");
        keyPair("server", "CN=localhost", "SAN=dns:localhost,ip:127.0.0.1");
        keyPair("client", CLIENT, null);
        trust("server", "client-trust");
        trust("client", "server-trust");

        KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        keys.init(load("server"), PASSWORD.toCharArray());
        TrustManagerFactory trusted = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trusted.init(load("server-trust"));
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(keys.getKeyManagers(), trusted.getTrustManagers(), null);

        HttpsServer server = HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setHttpsConfigurator(new HttpsConfigurator(context) {
            @Override
            public void configure(HttpsParameters params) {
                SSLParameters parameters = context.getDefaultSSLParameters();
                parameters.setNeedClientAuth(true);
                params.setSSLParameters(parameters);
            }
        });
        return server;
    }

    @Override
    public void stop() {
        super.stop();
        if (dir != null) {
            try (var files = Files.list(dir)) {
                for (Path file : files.toList()) {
                    Files.deleteIfExists(file);
                }
                Files.deleteIfExists(dir);
            } catch (IOException ignored) {
                // a temporary folder left behind
            }
        }
    }

    @Override
    protected Map<String, String> settings(int port) {
        return Map.of("quarkus.rest-client.provider.url", "https://localhost:" + port,
                "quarkus.rest-client.provider.tls-configuration-name", "provider",
                "quarkus.tls.provider.key-store.p12.path", dir.resolve("client.p12").toString(),
                "quarkus.tls.provider.key-store.p12.password", PASSWORD,
                "quarkus.tls.provider.trust-store.p12.path", dir.resolve("client-trust.p12").toString(),
                "quarkus.tls.provider.trust-store.p12.password", PASSWORD);
    }

    private void keyPair(String name, String subject, String extension) throws IOException {
        List<String> generate = new ArrayList<>(List.of("-genkeypair", "-alias", name, "-keyalg", "EC", "-groupname",
                "secp256r1", "-dname", subject, "-validity", "2", "-storetype", "PKCS12", "-keystore", file(name),
                "-storepass", PASSWORD));
        if (extension != null) {
            generate.addAll(List.of("-ext", extension));
        }
        keytool(generate);
        keytool(List.of("-exportcert", "-rfc", "-alias", name, "-keystore", file(name), "-storepass", PASSWORD,
                "-file", dir.resolve(name + ".crt").toString()));
    }

    /** A trust store {@code store} holding {@code name}'s certificate. */
    private void trust(String name, String store) throws IOException {
        keytool(List.of("-importcert", "-noprompt", "-alias", name, "-file", dir.resolve(name + ".crt").toString(),
                "-storetype", "PKCS12", "-keystore", file(store), "-storepass", PASSWORD));
    }

    private KeyStore load(String name) throws IOException, GeneralSecurityException {
        KeyStore store = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(dir.resolve(name + ".p12"))) {
            store.load(in, PASSWORD.toCharArray());
        }
        return store;
    }

    private String file(String name) {
        return dir.resolve(name + ".p12").toString();
    }

    private static void keytool(List<String> arguments) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.addAll(arguments);
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IOException("keytool did not finish within 60 s: " + command);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
        String output = new String(process.getInputStream().readAllBytes());
        if (process.exitValue() != 0) {
            throw new IOException("keytool " + arguments.get(0) + " failed (" + process.exitValue() + "): " + output);
        }
    }
}
