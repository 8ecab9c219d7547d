package dev.ledgerline.transfers.config;

import jakarta.enterprise.context.ApplicationScoped;

import java.net.InetAddress;
import java.net.UnknownHostException;

/** This instance's name in leases ({@code claimed_by}), events ({@code actor}) and logs. */
@ApplicationScoped
public class InstanceId {

    private final String value;

    public InstanceId(LedgerlineConfig config) {
        this.value = config.instanceId().orElseGet(InstanceId::hostAndPid);
    }

    public String value() {
        return value;
    }

    private static String hostAndPid() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            host = "localhost";
        }
        return host + ":" + ProcessHandle.current().pid();
    }
}
