package dev.ledgerline.transfers.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.transfers.hashing.Sha256;
import dev.ledgerline.transfers.idempotency.ResponseBodies;
import dev.ledgerline.transfers.transfer.Transfer;
import dev.ledgerline.transfers.transfer.TransferRequest;
import jakarta.inject.Singleton;
import org.eclipse.microprofile.config.inject.ConfigProperty;

import java.lang.reflect.RecordComponent;
import java.util.TreeSet;

/**
 * A transfer as the body of a POST's answer, written by the same {@link ObjectMapper} the endpoints answer with, for the
 * final idempotency entries replays answer from. Its stamp names what a kept body and a kept response depend on: the
 * application's version, the settings {@link TransferRequestParser} validates with, and the fields of
 * {@link TransferView}; a change to any of them makes every kept body and response stale at once, and replays take the
 * canonical path again.
 */
@Singleton
public class TransferBodies implements ResponseBodies {

    private final ObjectMapper mapper;
    private final String stamp;

    public TransferBodies(ObjectMapper mapper, LedgerlineConfig config,
                          @ConfigProperty(name = "quarkus.application.version", defaultValue = "unversioned") String version) {
        this.mapper = mapper;
        LedgerlineConfig.Transfers limits = config.transfers();
        StringBuilder rules = new StringBuilder(version)
                .append('|').append(limits.maxAmount())
                .append('|').append(new TreeSet<>(limits.currencies()))
                .append('|').append(limits.maxNameLength())
                .append('|').append(limits.maxDescriptionLength())
                .append('|').append(config.http().maxBodyBytes());
        shape(rules, TransferView.class);
        shape(rules, TransferRequest.Destination.class);
        this.stamp = Sha256.hex(rules.toString()).substring(0, 16);
    }

    private static void shape(StringBuilder out, Class<? extends Record> view) {
        for (RecordComponent c : view.getRecordComponents()) {
            out.append('|').append(c.getName()).append(':').append(c.getType().getName());
        }
    }

    @Override
    public String stamp() {
        return stamp;
    }

    @Override
    public String of(Transfer transfer) {
        try {
            return mapper.writeValueAsString(TransferView.of(transfer));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a transfer view that Jackson cannot write", e);
        }
    }
}
