package dev.ledgerline.transfers.webhooks;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.InetAddress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The prod policy (no http, no private hosts) refuses what could reach inside the network, and only that. */
class UrlPolicyTest {

    private final UrlPolicy prod = new UrlPolicy(false, false);

    @ParameterizedTest
    @ValueSource(strings = {"http://example.com/hook", "ftp://example.com/hook", "not a url", "", "https://", "/relative",
            "https://user:pw@example.com/hook", "https://example.com/hook#part", "javascript:alert(1)", "file:///etc/passwd",
            "https://example.com:0/hook", "https://example.com:65536/hook", "https:example.com/hook"})
    void refusesUrlsThatAreNotPlainHttps(String url) {
        assertThrows(IllegalArgumentException.class, () -> prod.parse(url));
    }

    @Test
    void acceptsHttpsAndHttpOnlyWhenAllowed() {
        assertEquals("example.com", prod.parse("https://example.com:8443/hooks?x=1").getHost());
        assertEquals("127.0.0.1", new UrlPolicy(true, true).parse("http://127.0.0.1:8080/x").getHost());
        assertThrows(IllegalArgumentException.class, () -> prod.parse("https://" + "a".repeat(2050) + ".com/"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"10.0.0.1", "10.255.255.255", "172.16.0.1", "172.31.255.254", "192.168.1.1", "127.0.0.1",
            "127.1.2.3", "169.254.169.254", "169.254.1.1", "0.0.0.0", "100.64.0.1", "224.0.0.1", "::1", "::", "fc00::1",
            "fd12:3456::1", "fe80::1", "::ffff:10.0.0.1", "::ffff:127.0.0.1", "::ffff:169.254.169.254", "ff02::1"})
    void refusesInternalAddresses(String address) throws Exception {
        assertTrue(prod.refusal(InetAddress.getByName(address)).isPresent(), address);
    }

    @ParameterizedTest
    @ValueSource(strings = {"93.184.216.34", "8.8.8.8", "172.32.0.1", "172.15.255.255", "192.169.0.1", "2606:2800:220:1::1"})
    void acceptsPublicAddresses(String address) throws Exception {
        assertTrue(prod.refusal(InetAddress.getByName(address)).isEmpty(), address);
    }

    @Test
    void theMetadataAddressIsNamedAndTheSwitchAllowsEverything() throws Exception {
        assertTrue(prod.refusal(InetAddress.getByName("169.254.169.254")).orElseThrow().contains("metadata"));
        assertTrue(new UrlPolicy(true, true).refusal(InetAddress.getByName("10.0.0.1")).isEmpty());
    }
}
