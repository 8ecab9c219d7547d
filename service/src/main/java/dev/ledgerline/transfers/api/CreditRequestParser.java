package dev.ledgerline.transfers.api;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ledgerline.transfers.account.CreditRequest;
import dev.ledgerline.transfers.problem.Problem;
import dev.ledgerline.transfers.problem.ProblemException;
import dev.ledgerline.transfers.problem.ProblemType;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Turns a raw body into a {@link CreditRequest} or a 400/413/415 problem, under the same rules as a transfer's body
 * ({@link TransferRequestParser}: strict UTF-8, strict JSON limits, every field error at once, unknown fields refused).
 */
@ApplicationScoped
public class CreditRequestParser {

    private static final Set<String> FIELDS = Set.of("amount", "currency", "reference");

    private final TransferRequestParser fields;

    public CreditRequestParser(TransferRequestParser fields) {
        this.fields = fields;
    }

    public CreditRequest parse(byte[] body, String charset) {
        JsonNode root = fields.object(fields.decode(body, charset));
        List<Problem.FieldError> errors = new ArrayList<>();
        TransferRequestParser.unknownFields(root, "", FIELDS, errors);
        Long amount = fields.amount(root.get("amount"), errors);
        String currency = fields.currency(root.get("currency"), errors);
        String reference = TransferRequestParser.text(root.get("reference"), "reference", CreditRequest.MAX_REFERENCE_LENGTH,
                true, true, errors);
        if (!errors.isEmpty()) {
            throw new ProblemException(ProblemType.VALIDATION_FAILED,
                    errors.size() == 1 ? "One field is not valid." : errors.size() + " fields are not valid.", errors, Map.of());
        }
        return new CreditRequest(amount, currency, reference);
    }
}
