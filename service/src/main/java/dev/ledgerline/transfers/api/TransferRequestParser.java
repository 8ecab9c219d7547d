package dev.ledgerline.transfers.api;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeType;
import dev.ledgerline.transfers.config.LedgerlineConfig;
import dev.ledgerline.transfers.problem.Problem;
import dev.ledgerline.transfers.problem.ProblemException;
import dev.ledgerline.transfers.problem.ProblemType;
import dev.ledgerline.transfers.transfer.TransferRequest;
import jakarta.inject.Singleton;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.text.Normalizer;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Turns a raw body into a {@link TransferRequest} or a 400/413/415 problem listing every violated field.
 * The bytes are decoded as strict UTF-8 (a declared charset other than UTF-8 is 415; a malformed byte is
 * 400, never silently replaced, so two different bodies can never become one request; bytes that are all ASCII, and
 * none of them NUL, are UTF-8 as they are and read without a decode), then read as a
 * tree with strict limits (duplicate keys, nesting depth, number and string lengths), then checked field
 * by field, so a client sees all its mistakes at once and nothing it sends can reach a 500. Such an ASCII body that is
 * a plain valid request is read from its tokens without the tree ({@link #plain}), under the same limits and checks.
 *
 * <p>Names and descriptions are refused when they carry control characters, Unicode format characters
 * (category Cf: bidi overrides and isolates, zero-width spaces and joiners, soft hyphens) or a run of more
 * than {@value #MAX_COMBINING_RUN} combining marks: such text displays as something other than what it is,
 * which is how a beneficiary name is spoofed in an operator's or a bank's screen.
 *
 * <p>The name is taken in Unicode NFC and a blank description as none: the stored transfer, what the provider is
 * sent and the request's fingerprint ({@code idempotency.Fingerprint}) all see the same form.
 *
 * <p>An unknown field named as {@code /v1} names its fields is ignored (not stored, not part of the fingerprint, not
 * in the answer), so a client may send an optional field an older instance does not know yet; a misspelt known field
 * (other case) or a name no field could have is refused. Duplicate keys and type errors are refused as before.
 *
 * <p>{@code executeAt} is an RFC 3339 date-time with seconds and an offset ({@code Z} or {@code ±hh:mm}), at most
 * {@link TransferRequest#MAX_SCHEDULE_AHEAD} ahead by this instance's clock. That it lies in the future is checked
 * where the key is known ({@code idempotency.IdempotencyService}): a retry of an accepted request after its time is a
 * replay, not a mistake. PostgreSQL's clock decides when it is due (the claim waits for it).
 */
@Singleton
public class TransferRequestParser {

    private static final Set<String> TOP_FIELDS = Set.of("amount", "currency", "destination", "description", "executeAt");
    private static final Set<String> DESTINATION_FIELDS = Set.of("iban", "name");
    /** RFC 3339 {@code date-time}: seconds required, an offset required, fractions up to nanoseconds. */
    private static final Pattern RFC3339 = Pattern.compile(
            "\\d{4}-\\d{2}-\\d{2}[Tt]\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?([Zz]|[+-]\\d{2}:\\d{2})");
    /** A name {@code /v1} may add an optional field under: lowerCamelCase ASCII, at most 64 characters. */
    private static final Pattern FUTURE_FIELD = Pattern.compile("[a-z][A-Za-z0-9]{0,63}");
    /** Combining marks one base character may carry; real scripts stack a few, spoofing stacks dozens. */
    static final int MAX_COMBINING_RUN = 4;

    private final ObjectMapper mapper;
    private final LedgerlineConfig.Transfers limits;
    private final int maxBodyBytes;

    public TransferRequestParser(LedgerlineConfig config) {
        this.limits = config.transfers();
        this.maxBodyBytes = config.http().maxBodyBytes();
        JsonFactory factory = JsonFactory.builder()
                .enable(com.fasterxml.jackson.core.StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                .streamReadConstraints(StreamReadConstraints.builder()
                        .maxNestingDepth(8)
                        .maxNumberLength(40)
                        .maxStringLength(4096)
                        .build())
                .build();
        this.mapper = new ObjectMapper(factory);
    }

    /**
     * The request from the raw body as sent, under the {@code charset} parameter of its Content-Type
     * ({@code null} when none was given: JSON is UTF-8, RFC 8259 §8.1).
     */
    public TransferRequest parse(byte[] body, String charset) {
        if (body != null && body.length > 0 && body.length <= maxBodyBytes && utf8(charset) && ascii(body)) {
            // ASCII is UTF-8 as it is: read the bytes themselves, without decoding them into a text and encoding that
            // text again for the size bound; every other body takes the strict decode. Without a NUL byte, too: Jackson
            // reads bytes with NULs among the first four as UTF-16 or UTF-32, another text than their UTF-8
            if (blank(body)) {
                throw emptyBody();
            }
            TransferRequest plain = plain(body);
            return plain != null ? plain : fields(object(readTree(body)));
        }
        return parse(decode(body, charset));
    }

    /** Whether {@code charset} (the Content-Type's parameter, {@code null}: none) names UTF-8, JSON's own encoding. */
    private static boolean utf8(String charset) {
        return charset == null || charset.strip().replace("\"", "").equalsIgnoreCase("utf-8");
    }

    /** Whether every byte is ASCII and none is NUL. */
    private static boolean ascii(byte[] body) {
        for (byte b : body) {
            if (b <= 0) {
                return false;
            }
        }
        return true;
    }

    /** What {@link String#isBlank} says of these ASCII bytes as a text. */
    private static boolean blank(byte[] body) {
        for (byte b : body) {
            if (!Character.isWhitespace((char) b)) {
                return false;
            }
        }
        return true;
    }

    /** The body as text: strict UTF-8 under {@code charset} (415 for another), within the size bound (413). */
    String decode(byte[] body, String charset) {
        if (!utf8(charset)) {
            throw new ProblemException(ProblemType.UNSUPPORTED_MEDIA_TYPE,
                    "Send the body as UTF-8 JSON: application/json without a charset, or with charset=utf-8.");
        }
        if (body == null || body.length == 0) {
            return "";
        }
        if (body.length > maxBodyBytes) {
            throw new ProblemException(ProblemType.PAYLOAD_TOO_LARGE,
                    "The request body is larger than " + maxBodyBytes + " bytes.");
        }
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(body)).toString();
        } catch (CharacterCodingException e) {
            throw new ProblemException(ProblemType.MALFORMED_REQUEST, "The request body is not valid UTF-8.");
        }
    }

    public TransferRequest parse(String body) {
        return fields(object(body));
    }

    /** The request from the body's JSON object, every field checked. */
    private TransferRequest fields(JsonNode root) {
        List<Problem.FieldError> errors = new ArrayList<>();
        unknownFields(root, "", TOP_FIELDS, errors);
        Long amount = amount(root.get("amount"), errors);
        String currency = currency(root.get("currency"), errors);
        TransferRequest.Destination destination = destination(root.get("destination"), errors);
        String description = text(root.get("description"), "description", limits.maxDescriptionLength(), false, false, errors);
        OffsetDateTime executeAt = executeAt(root.get("executeAt"), errors);
        if (!errors.isEmpty()) {
            throw new ProblemException(ProblemType.VALIDATION_FAILED,
                    errors.size() == 1 ? "One field is not valid." : errors.size() + " fields are not valid.", errors, Map.of());
        }
        return new TransferRequest(amount, currency, destination, description, executeAt);
    }

    /** The body as one JSON object, within the size bound and the reader's limits, or a 400/413 problem. */
    JsonNode object(String body) {
        if (body == null || body.isBlank()) {
            throw emptyBody();
        }
        if (body.getBytes(StandardCharsets.UTF_8).length > maxBodyBytes) {
            throw new ProblemException(ProblemType.PAYLOAD_TOO_LARGE,
                    "The request body is larger than " + maxBodyBytes + " bytes.");
        }
        return object(readTree(body));
    }

    private static JsonNode object(JsonNode root) {
        if (!root.isObject()) {
            throw new ProblemException(ProblemType.MALFORMED_REQUEST, "The request body must be a JSON object.");
        }
        return root;
    }

    private static ProblemException emptyBody() {
        return new ProblemException(ProblemType.MALFORMED_REQUEST, "The request body is empty; send a JSON object.");
    }

    /**
     * The request read from the body's tokens, when the body is a plain valid request: one object, each of its
     * fields a known one of the type it must have, every value valid. Anything else is {@code null}, and the tree
     * ({@link #fields}) decides, with the same checks: an unknown field, a {@code null} where a value is required, a
     * value not valid, a JSON error. So both ways give the same request for every body this one reads, which
     * {@code TransferRequestParserTest} compares; this way builds no tree of the body first.
     */
    TransferRequest plain(byte[] body) {
        List<Problem.FieldError> errors = new ArrayList<>(0);
        try (JsonParser in = mapper.getFactory().createParser(body)) {
            if (in.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            Long amount = null;
            String currency = null;
            TransferRequest.Destination destination = null;
            String description = null;
            OffsetDateTime executeAt = null;
            JsonToken token;
            while ((token = in.nextToken()) == JsonToken.FIELD_NAME) {
                String field = in.currentName();
                JsonToken value = in.nextToken();
                switch (field) {
                    case "amount" -> {
                        if (value != JsonToken.VALUE_NUMBER_INT || in.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
                            return null;
                        }
                        long minor = in.getLongValue();
                        if (minor <= 0 || minor > limits.maxAmount()) {
                            return null;
                        }
                        amount = minor;
                    }
                    case "currency" -> {
                        if (value != JsonToken.VALUE_STRING || !limits.currencies().contains(in.getText())) {
                            return null;
                        }
                        currency = in.getText();
                    }
                    case "destination" -> {
                        destination = value == JsonToken.START_OBJECT ? plainDestination(in, errors) : null;
                        if (destination == null) {
                            return null;
                        }
                    }
                    case "description" -> {
                        if (value == JsonToken.VALUE_STRING) {
                            description = text(in.getText(), "description", limits.maxDescriptionLength(), false, false, errors);
                        } else if (value != JsonToken.VALUE_NULL) {
                            return null;
                        }
                    }
                    case "executeAt" -> {
                        if (value == JsonToken.VALUE_STRING) {
                            executeAt = executeAt(in.getText(), errors);
                        } else if (value != JsonToken.VALUE_NULL) {
                            return null;
                        }
                    }
                    default -> {
                        return null;
                    }
                }
            }
            if (token != JsonToken.END_OBJECT || in.nextToken() != null || amount == null || currency == null
                    || destination == null || !errors.isEmpty()) {
                return null;
            }
            return new TransferRequest(amount, currency, destination, description, executeAt);
        } catch (IOException | RuntimeException notPlain) {
            return null;
        }
    }

    /** {@link #plain}'s destination: an object of a valid {@code iban} and {@code name}, else {@code null}. */
    private TransferRequest.Destination plainDestination(JsonParser in, List<Problem.FieldError> errors) throws IOException {
        String iban = null;
        String name = null;
        JsonToken token;
        while ((token = in.nextToken()) == JsonToken.FIELD_NAME) {
            String field = in.currentName();
            if (in.nextToken() != JsonToken.VALUE_STRING) {
                return null;
            }
            switch (field) {
                case "iban" -> iban = iban(text(in.getText(), "destination.iban", 64, true, false, errors), errors);
                case "name" -> name = text(in.getText(), "destination.name", limits.maxNameLength(), true, true, errors);
                default -> {
                    return null;
                }
            }
        }
        return token == JsonToken.END_OBJECT && iban != null && name != null && errors.isEmpty()
                ? new TransferRequest.Destination(iban, name) : null;
    }

    /** Absent or {@code null}: at once. Otherwise an instant at most the schedule horizon ahead. */
    private static OffsetDateTime executeAt(JsonNode node, List<Problem.FieldError> errors) {
        if (node == null || node.isNull()) {
            return null;
        }
        return executeAt(node.isTextual() ? node.textValue() : null, errors);
    }

    /** {@link #executeAt(JsonNode, List)} of a string value ({@code null}: a value that is not a string). */
    private static OffsetDateTime executeAt(String text, List<Problem.FieldError> errors) {
        if (text == null || !RFC3339.matcher(text).matches()) {
            errors.add(new Problem.FieldError("executeAt",
                    "must be an RFC 3339 date-time with seconds and an offset, e.g. 2030-01-31T09:00:00Z or 2030-01-31T10:00:00+01:00"));
            return null;
        }
        OffsetDateTime value;
        try {
            value = OffsetDateTime.parse(text.toUpperCase(Locale.ROOT));
        } catch (DateTimeParseException e) {
            errors.add(new Problem.FieldError("executeAt", "is not a valid date-time (no such day, hour or offset)"));
            return null;
        }
        if (value.toInstant().isAfter(Instant.now().plus(TransferRequest.MAX_SCHEDULE_AHEAD))) {
            errors.add(new Problem.FieldError("executeAt", "must be at most " + TransferRequest.MAX_SCHEDULE_AHEAD.toDays() + " days ahead"));
            return null;
        }
        return value;
    }

    private JsonNode readTree(String body) {
        try (JsonParser parser = mapper.getFactory().createParser(body)) {
            return readTree(parser);
        } catch (IOException e) {
            throw unreadable(e);
        }
    }

    private JsonNode readTree(byte[] body) {
        try (JsonParser parser = mapper.getFactory().createParser(body)) {
            return readTree(parser);
        } catch (IOException e) {
            throw unreadable(e);
        }
    }

    /** Exactly one JSON value; Jackson's failure names what it found where. */
    private JsonNode readTree(JsonParser parser) throws IOException {
        JsonNode root = mapper.readTree(parser);
        if (root == null || parser.nextToken() != null) {
            throw new ProblemException(ProblemType.MALFORMED_REQUEST, "The request body must be exactly one JSON object.");
        }
        return root;
    }

    private static ProblemException unreadable(IOException e) {
        return e instanceof JsonProcessingException json
                ? new ProblemException(ProblemType.MALFORMED_REQUEST, "The request body is not valid JSON: " + json.getOriginalMessage())
                : new ProblemException(ProblemType.MALFORMED_REQUEST, "The request body could not be read.");
    }

    Long amount(JsonNode node, List<Problem.FieldError> errors) {
        if (node == null || node.isNull()) {
            errors.add(new Problem.FieldError("amount", "is required"));
            return null;
        }
        if (!node.isIntegralNumber()) {
            errors.add(new Problem.FieldError("amount", "must be a whole number of minor units"));
            return null;
        }
        if (!node.canConvertToLong()) {
            errors.add(new Problem.FieldError("amount", "must be at most " + limits.maxAmount()));
            return null;
        }
        long value = node.longValue();
        if (value <= 0) {
            errors.add(new Problem.FieldError("amount", "must be greater than 0"));
        } else if (value > limits.maxAmount()) {
            errors.add(new Problem.FieldError("amount", "must be at most " + limits.maxAmount()));
        }
        return value;
    }

    String currency(JsonNode node, List<Problem.FieldError> errors) {
        if (node == null || node.isNull()) {
            errors.add(new Problem.FieldError("currency", "is required"));
            return null;
        }
        if (!node.isTextual()) {
            errors.add(new Problem.FieldError("currency", "must be a string"));
            return null;
        }
        String value = node.textValue();
        if (!limits.currencies().contains(value)) {
            errors.add(new Problem.FieldError("currency", "must be one of the accepted ISO 4217 codes " + new TreeSet<>(limits.currencies())));
        }
        return value;
    }

    private TransferRequest.Destination destination(JsonNode node, List<Problem.FieldError> errors) {
        if (node == null || node.isNull()) {
            errors.add(new Problem.FieldError("destination", "is required"));
            return null;
        }
        if (!node.isObject()) {
            errors.add(new Problem.FieldError("destination", "must be an object with iban and name"));
            return null;
        }
        unknownFields(node, "destination.", DESTINATION_FIELDS, errors);
        String iban = iban(text(node.get("iban"), "destination.iban", 64, true, false, errors), errors);
        String name = text(node.get("name"), "destination.name", limits.maxNameLength(), true, true, errors);
        return new TransferRequest.Destination(iban, name);
    }

    /** A checked IBAN field's value ({@code null}: none) normalised, its problem added to {@code errors}. */
    private static String iban(String checked, List<Problem.FieldError> errors) {
        if (checked == null) {
            return null;
        }
        String iban = Iban.normalise(checked);
        String problem = Iban.problem(iban);
        if (problem != null) {
            errors.add(new Problem.FieldError("destination.iban", problem));
        }
        return iban;
    }

    /**
     * A string field: trimmed, non-blank if required (a blank optional field is absent), bounded in code points, no
     * control or format characters, no more than {@value #MAX_COMBINING_RUN} combining marks in a row. With
     * {@code composed} (the beneficiary name) the value is taken in Unicode NFC, and the checks apply to that form, which
     * is what is stored, fingerprinted and sent to the provider: typed composed or decomposed, a name gets one answer.
     */
    static String text(JsonNode node, String field, int maxLength, boolean required, boolean composed,
                               List<Problem.FieldError> errors) {
        if (node == null || node.isNull()) {
            if (required) {
                errors.add(new Problem.FieldError(field, "is required"));
            }
            return null;
        }
        if (node.getNodeType() != JsonNodeType.STRING) {
            errors.add(new Problem.FieldError(field, "must be a string"));
            return null;
        }
        return text(node.textValue(), field, maxLength, required, composed, errors);
    }

    /** {@link #text(JsonNode, String, int, boolean, boolean, List)} of a string value. */
    private static String text(String raw, String field, int maxLength, boolean required, boolean composed,
                               List<Problem.FieldError> errors) {
        String value = raw.strip();
        // printable ASCII is in NFC, one code point per char, and has no control, format or combining character
        boolean printable = printableAscii(value);
        if (composed && !printable) {
            value = Normalizer.normalize(value, Normalizer.Form.NFC);
        }
        if (value.isEmpty()) {
            if (required) {
                errors.add(new Problem.FieldError(field, "must not be blank"));
            }
            return null;
        }
        if ((printable ? value.length() : value.codePointCount(0, value.length())) > maxLength) {
            errors.add(new Problem.FieldError(field, "must be at most " + maxLength + " characters"));
            return null;
        }
        return printable ? value : unicodeChecked(value, field, errors);
    }

    /** Whether every char of {@code value} is printable ASCII (space to tilde). */
    private static boolean printableAscii(String value) {
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c < 0x20 || c > 0x7e) {
                return false;
            }
        }
        return true;
    }

    /** {@code value} unless it has a control or format character or too many combining marks in a row. */
    static String unicodeChecked(String value, String field, List<Problem.FieldError> errors) {
        if (value.codePoints().anyMatch(cp -> Character.isISOControl(cp) || Character.getType(cp) == Character.SURROGATE)) {
            errors.add(new Problem.FieldError(field, "must not contain control characters"));
            return null;
        }
        if (value.codePoints().anyMatch(cp -> Character.getType(cp) == Character.FORMAT)) {
            errors.add(new Problem.FieldError(field,
                    "must not contain invisible format characters (bidi controls, zero-width characters)"));
            return null;
        }
        if (longestCombiningRun(value) > MAX_COMBINING_RUN) {
            errors.add(new Problem.FieldError(field,
                    "must not stack more than " + MAX_COMBINING_RUN + " combining marks on one character"));
            return null;
        }
        return value;
    }

    private static int longestCombiningRun(String value) {
        int longest = 0;
        int run = 0;
        for (int i = 0; i < value.length(); ) {
            int cp = value.codePointAt(i);
            int type = Character.getType(cp);
            boolean mark = type == Character.NON_SPACING_MARK || type == Character.ENCLOSING_MARK
                    || type == Character.COMBINING_SPACING_MARK;
            run = mark ? run + 1 : 0;
            longest = Math.max(longest, run);
            i += Character.charCount(cp);
        }
        return longest;
    }

    /**
     * Fields this instance does not know. One whose name {@code /v1} could add a field under (lowerCamelCase ASCII, as
     * every field of the API is) is ignored: during a rolling update a newer client may send an optional field to an
     * older instance (docs/http.md "API versioning"). A name that differs from a known field only in case is a
     * mistake that would silently change the transfer (an {@code executeat} ignored would send it at once), and any
     * other name can be no field of {@code /v1}: both are refused.
     */
    static void unknownFields(JsonNode object, String prefix, Set<String> known, List<Problem.FieldError> errors) {
        for (Iterator<String> names = object.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (known.contains(name)) {
                continue;
            }
            String meant = known.stream().filter(name::equalsIgnoreCase).findFirst().orElse(null);
            if (meant != null) {
                errors.add(new Problem.FieldError(prefix + abbreviate(name), "is not a known field; did you mean " + meant + "?"));
            } else if (!FUTURE_FIELD.matcher(name).matches()) {
                errors.add(new Problem.FieldError(prefix + abbreviate(name), "is not a known field"));
            }
        }
    }

    private static String abbreviate(String name) {
        return name.length() <= 64 ? name : name.substring(0, 64) + "…";
    }
}
