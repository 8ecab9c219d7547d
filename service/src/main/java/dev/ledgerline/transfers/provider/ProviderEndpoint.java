package dev.ledgerline.transfers.provider;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

import java.util.Map;
import java.util.Optional;

/**
 * Where the provider is and how to reach it: the settings {@link ProviderHttp} reads, under the names Quarkus's REST
 * client gives them ({@code quarkus.rest-client.provider.*}), with its defaults, so a configuration written for the
 * REST client means the same here. A setting of that client that is not one of these is refused at start-up
 * ({@link ProviderHttp#unsupported}), never silently ignored.
 */
@ConfigMapping(prefix = "quarkus.rest-client.provider")
public interface ProviderEndpoint {

    /** The provider's base URL; {@code /payments} is under it. Required. */
    Optional<String> url();

    /** The same as {@link #url()}, the REST client's other name for it; {@code url} wins when both are set. */
    Optional<String> uri();

    /** Milliseconds to open a connection. */
    @WithDefault("15000")
    long connectTimeout();

    /** Milliseconds a request may go without a byte of its answer before it fails. */
    @WithDefault("30000")
    long readTimeout();

    /** Connections kept to the provider at most by each event loop's client ({@link ProviderHttp}). */
    @WithDefault("50")
    int connectionPoolSize();

    /** Headers sent with every request (credentials, as {@code headers.Authorization}). */
    Map<String, String> headers();

    /** The {@code quarkus.tls.<name>} configuration of an {@code https} URL (a client certificate, a private CA). */
    Optional<String> tlsConfigurationName();
}
