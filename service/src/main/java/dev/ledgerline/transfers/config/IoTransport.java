package dev.ledgerline.transfers.config;

import io.netty.channel.epoll.Epoll;
import io.quarkus.runtime.StartupEvent;
import io.vertx.core.Vertx;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Says at start-up which I/O transport the HTTP server and every client run on. The service asks for Netty's native
 * epoll transport ({@code quarkus.vertx.prefer-native-transport}; the pom ships its Linux x86_64 and aarch64
 * libraries), which reads and writes sockets with fewer system calls and less work per event than NIO's selector.
 * Where the library does not load (another OS or CPU, a {@code /tmp} it cannot be unpacked into or run from) Vert.x
 * quietly runs on NIO and keeps no cause: correct, but each request costs more CPU, so on Linux that is a warning with
 * Netty's own reason.
 */
@Singleton
public class IoTransport {

    private static final Logger LOG = Logger.getLogger(IoTransport.class);

    void onStart(@Observes StartupEvent start, Vertx vertx,
                 @ConfigProperty(name = "quarkus.vertx.prefer-native-transport", defaultValue = "false") boolean preferred) {
        if (vertx.isNativeTransportEnabled()) {
            LOG.info("step=startup I/O on Netty's native epoll transport");
        } else if (!preferred) {
            LOG.info("step=startup I/O on NIO: quarkus.vertx.prefer-native-transport is off");
        } else if (linux()) {
            LOG.warnf("step=startup I/O on NIO: the native epoll transport did not load (%s); requests cost more CPU",
                    Epoll.isAvailable() ? "Vert.x did not take it" : String.valueOf(Epoll.unavailabilityCause()));
        } else {
            LOG.info("step=startup I/O on NIO: no native transport is shipped for this platform");
        }
    }

    static boolean linux() {
        return System.getProperty("os.name", "").toLowerCase().startsWith("linux");
    }
}
