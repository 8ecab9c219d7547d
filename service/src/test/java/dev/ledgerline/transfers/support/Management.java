package dev.ledgerline.transfers.support;

import io.restassured.RestAssured;
import io.restassured.specification.RequestSpecification;
import org.eclipse.microprofile.config.ConfigProvider;

/**
 * The one place tests learn where a service serves {@code /q/*} (health, metrics, the contract): Quarkus's
 * management interface, on a port of its own, never the API port.
 */
public final class Management {

    /** The variable that moves a packaged service's management interface (9000 by default). */
    public static final String PORT_VARIABLE = "QUARKUS_MANAGEMENT_PORT";

    private Management() {
    }

    /** The management port of the {@code @QuarkusTest} service ({@code quarkus.management.test-port}). */
    public static int port() {
        return ConfigProvider.getConfig().getOptionalValue("quarkus.management.test-port", Integer.class).orElse(9001);
    }

    /** The base URL of the management interface of a service on this machine listening on {@code port}. */
    public static String url(int port) {
        return "http://127.0.0.1:" + port;
    }

    /** REST Assured aimed at the {@code @QuarkusTest} service's management interface. */
    public static RequestSpecification given() {
        return given(port());
    }

    /** REST Assured aimed at the management interface on {@code port}. */
    public static RequestSpecification given(int port) {
        return RestAssured.given().baseUri("http://127.0.0.1").port(port);
    }
}
