package dev.ledgerline.transfers.webhooks;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;
import java.util.Optional;

/**
 * Which endpoint URLs the service will send to (server-side request forgery): {@code https} only unless
 * {@code allow-http}, an absolute URL with a host and no user info or fragment, and — unless
 * {@code allow-private-hosts} — no address in the loopback, private (10/8, 172.16/12, 192.168/16, 100.64/10),
 * unique-local (fc00::/7), link-local (169.254/16 with the cloud metadata address, fe80::/10), multicast or
 * unspecified ranges, IPv4-mapped IPv6 addresses judged by the IPv4 address they carry. Pure: no DNS here; the
 * caller resolves off the event loop and asks {@link #refusal(InetAddress)} of every address.
 */
public final class UrlPolicy {

    /** The longest URL accepted (the column's bound). */
    public static final int MAX_LENGTH = 2048;

    private final boolean allowHttp;
    private final boolean allowPrivateHosts;

    public UrlPolicy(boolean allowHttp, boolean allowPrivateHosts) {
        this.allowHttp = allowHttp;
        this.allowPrivateHosts = allowPrivateHosts;
    }

    /** The URL, parsed; {@link IllegalArgumentException} with a sentence for the client when it is refused. */
    public URI parse(String url) {
        if (url == null || url.isBlank()) {
            throw new IllegalArgumentException("must be an absolute https URL");
        }
        if (url.length() > MAX_LENGTH) {
            throw new IllegalArgumentException("must be at most " + MAX_LENGTH + " characters");
        }
        URI uri;
        try {
            uri = new URI(url);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("is not a URL");
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("https") && !(allowHttp && scheme.equals("http"))) {
            throw new IllegalArgumentException(allowHttp ? "must be an http or https URL" : "must be an https URL");
        }
        if (uri.getHost() == null || uri.getHost().isEmpty()) {
            throw new IllegalArgumentException("must name a host");
        }
        if (uri.getRawUserInfo() != null) {
            throw new IllegalArgumentException("must not carry user info");
        }
        if (uri.getRawFragment() != null) {
            throw new IllegalArgumentException("must not carry a fragment");
        }
        if (uri.getPort() == 0 || uri.getPort() > 65535) {
            throw new IllegalArgumentException("must name a port from 1 to 65535, or none");
        }
        return uri;
    }

    /** The host as the resolver wants it: an IPv6 literal without its brackets. */
    public static String host(URI uri) {
        String host = uri.getHost();
        return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    }

    public static int port(URI uri) {
        return uri.getPort() > 0 ? uri.getPort() : uri.getScheme().equalsIgnoreCase("https") ? 443 : 80;
    }

    /** Why the service will not send to {@code address}, or empty when it may. */
    public Optional<String> refusal(InetAddress address) {
        if (allowPrivateHosts) {
            return Optional.empty();
        }
        return Optional.ofNullable(kind(address)).map(kind -> "resolves to " + address.getHostAddress() + ", a " + kind
                + " address, which webhooks may not reach");
    }

    /** The kind of address no webhook may reach by default, or {@code null} for a public one. */
    static String kind(InetAddress address) {
        InetAddress a = address;
        if (a instanceof Inet6Address v6) {
            byte[] b = v6.getAddress();
            boolean mapped = true; // ::ffff:a.b.c.d, and the deprecated ::a.b.c.d
            boolean compatible = true;
            for (int i = 0; i < 10; i++) {
                mapped &= b[i] == 0;
            }
            compatible = mapped && b[10] == 0 && b[11] == 0;
            mapped &= b[10] == (byte) 0xff && b[11] == (byte) 0xff;
            if (mapped || (compatible && !a.isAnyLocalAddress() && !a.isLoopbackAddress())) {
                try {
                    a = InetAddress.getByAddress(new byte[]{b[12], b[13], b[14], b[15]});
                } catch (java.net.UnknownHostException e) {
                    return "malformed";
                }
            } else if ((b[0] & 0xfe) == 0xfc) {
                return "unique-local";
            }
        }
        if (a.isAnyLocalAddress()) {
            return "unspecified";
        }
        if (a.isLoopbackAddress()) {
            return "loopback";
        }
        if (a instanceof Inet4Address v4) {
            byte[] b = v4.getAddress();
            int first = b[0] & 0xff;
            int second = b[1] & 0xff;
            if (first == 169 && second == 254) {
                return (b[2] & 0xff) == 169 && (b[3] & 0xff) == 254 ? "cloud metadata" : "link-local";
            }
            if (first == 10 || (first == 172 && second >= 16 && second <= 31) || (first == 192 && second == 168)) {
                return "private";
            }
            if (first == 100 && second >= 64 && second <= 127) {
                return "shared (carrier-grade NAT)";
            }
            if (first == 0) {
                return "unspecified";
            }
            if (first >= 224) {
                return "multicast or reserved";
            }
        }
        if (a.isLinkLocalAddress()) {
            return "link-local";
        }
        if (a.isSiteLocalAddress()) {
            return "private";
        }
        if (a.isMulticastAddress()) {
            return "multicast or reserved";
        }
        return null;
    }
}
