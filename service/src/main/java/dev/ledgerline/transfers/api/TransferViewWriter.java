package dev.ledgerline.transfers.api;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.SerializableString;
import com.fasterxml.jackson.core.io.SerializedString;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.ser.std.StdSerializer;
import dev.ledgerline.transfers.transfer.TransferRequest;

import java.io.IOException;
import java.time.OffsetDateTime;

/**
 * Writes a {@link TransferView} field by field, in the text Jackson's bean serializer writes for it here: the record's
 * components in their order, {@code null} written as {@code null}, the timestamps through {@link UtcTimestamps}.
 * Jackson's bean serializer reads every component through a reflective call and looks each value's serializer up,
 * which was most of the JSON cost of a new transfer's answer once the timestamps were written by hand
 * (bench/CPU-AB.md). {@code TransferViewWriterTest} holds the two texts equal under the service's mapper; a change of
 * the view's components or of the mapper's naming or inclusion fails it.
 */
final class TransferViewWriter extends StdSerializer<TransferView> {

    private static final SerializableString ID = new SerializedString("id");
    private static final SerializableString STATUS = new SerializedString("status");
    private static final SerializableString AMOUNT = new SerializedString("amount");
    private static final SerializableString CURRENCY = new SerializedString("currency");
    private static final SerializableString DESTINATION = new SerializedString("destination");
    private static final SerializableString IBAN = new SerializedString("iban");
    private static final SerializableString NAME = new SerializedString("name");
    private static final SerializableString DESCRIPTION = new SerializedString("description");
    private static final SerializableString PROVIDER_REFERENCE = new SerializedString("providerReference");
    private static final SerializableString VERSION = new SerializedString("version");
    private static final SerializableString FAILURE_REASON = new SerializedString("failureReason");
    private static final SerializableString CREATED_AT = new SerializedString("createdAt");
    private static final SerializableString UPDATED_AT = new SerializedString("updatedAt");
    private static final SerializableString EXECUTE_AT = new SerializedString("executeAt");

    private final UtcTimestamps timestamps = new UtcTimestamps();

    TransferViewWriter() {
        super(TransferView.class);
    }

    @Override
    public void serialize(TransferView view, JsonGenerator gen, SerializerProvider provider) throws IOException {
        gen.writeStartObject(view);
        gen.writeFieldName(ID);
        text(gen, view.id() == null ? null : view.id().toString());
        gen.writeFieldName(STATUS);
        text(gen, view.status());
        gen.writeFieldName(AMOUNT);
        gen.writeNumber(view.amount());
        gen.writeFieldName(CURRENCY);
        text(gen, view.currency());
        gen.writeFieldName(DESTINATION);
        TransferRequest.Destination destination = view.destination();
        if (destination == null) {
            gen.writeNull();
        } else {
            gen.writeStartObject(destination);
            gen.writeFieldName(IBAN);
            text(gen, destination.iban());
            gen.writeFieldName(NAME);
            text(gen, destination.name());
            gen.writeEndObject();
        }
        gen.writeFieldName(DESCRIPTION);
        text(gen, view.description());
        gen.writeFieldName(PROVIDER_REFERENCE);
        text(gen, view.providerReference());
        gen.writeFieldName(VERSION);
        gen.writeNumber(view.version());
        gen.writeFieldName(FAILURE_REASON);
        text(gen, view.failureReason());
        gen.writeFieldName(CREATED_AT);
        timestamp(gen, view.createdAt(), provider);
        gen.writeFieldName(UPDATED_AT);
        timestamp(gen, view.updatedAt(), provider);
        gen.writeFieldName(EXECUTE_AT);
        timestamp(gen, view.executeAt(), provider);
        gen.writeEndObject();
    }

    private static void text(JsonGenerator gen, String value) throws IOException {
        if (value == null) {
            gen.writeNull();
        } else {
            gen.writeString(value);
        }
    }

    private void timestamp(JsonGenerator gen, OffsetDateTime value, SerializerProvider provider) throws IOException {
        if (value == null) {
            gen.writeNull();
        } else {
            timestamps.serialize(value, gen, provider);
        }
    }
}
