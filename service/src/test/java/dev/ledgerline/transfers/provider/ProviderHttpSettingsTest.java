package dev.ledgerline.transfers.provider;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Which REST-client settings the provider's client refuses at start-up, rather than ignore them. */
class ProviderHttpSettingsTest {

    @Test
    void theSettingsItReadsAndTheHeadersPassInEitherForm() {
        assertEquals(List.of(), ProviderHttp.unsupported(List.of(
                "quarkus.rest-client.provider.url", "quarkus.rest-client.provider.uri",
                "quarkus.rest-client.provider.connect-timeout", "quarkus.rest-client.provider.read-timeout",
                "quarkus.rest-client.provider.connection-pool-size", "quarkus.rest-client.provider.tls-configuration-name",
                "quarkus.rest-client.provider.headers.Authorization", "QUARKUS_REST_CLIENT_PROVIDER_URL",
                "QUARKUS_REST_CLIENT_PROVIDER_TLS_CONFIGURATION_NAME", "QUARKUS_REST_CLIENT_PROVIDER_HEADERS_AUTHORIZATION",
                "quarkus.tls.provider.key-store.p12.path", "%dev.quarkus.rest-client.provider.url", "ledgerline.provider.timeout-ms")));
    }

    @Test
    void everyOtherRestClientSettingIsRefused() {
        assertEquals(List.of("QUARKUS_REST_CLIENT_PROVIDER_PROXY_ADDRESS", "QUARKUS_REST_CLIENT_READ_TIMEOUT",
                        "quarkus.rest-client.\"provider\".url", "quarkus.rest-client.other.url",
                        "quarkus.rest-client.provider.trust-store", "quarkus.rest-client.provider.verify-host",
                        "quarkus.rest-client.read-timeout"),
                ProviderHttp.unsupported(List.of("quarkus.rest-client.provider.trust-store",
                        "quarkus.rest-client.provider.verify-host", "quarkus.rest-client.read-timeout",
                        "quarkus.rest-client.\"provider\".url", "quarkus.rest-client.other.url",
                        "QUARKUS_REST_CLIENT_PROVIDER_PROXY_ADDRESS", "QUARKUS_REST_CLIENT_READ_TIMEOUT")));
    }

    @Test
    void aReferenceIsOnePathSegment() {
        assertEquals("ll_0f3a-9.x", ProviderHttp.segment("ll_0f3a-9.x"));
        assertEquals("a%2Fb%3Fc%20d%25", ProviderHttp.segment("a/b?c d%"));
    }
}
