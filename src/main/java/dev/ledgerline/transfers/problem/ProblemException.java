package dev.ledgerline.transfers.problem;

import java.util.List;
import java.util.Map;

/** A domain outcome that becomes a problem document; {@code api.ProblemMapper} is the only place that renders it. */
public class ProblemException extends RuntimeException {

    private final ProblemType type;
    private final List<Problem.FieldError> errors;
    private final Map<String, String> headers;

    public ProblemException(ProblemType type, String detail) {
        this(type, detail, null, Map.of());
    }

    public ProblemException(ProblemType type, String detail, List<Problem.FieldError> errors, Map<String, String> headers) {
        super(detail, null, false, false);
        this.type = type;
        this.errors = errors;
        this.headers = headers;
    }

    public ProblemType type() {
        return type;
    }

    public List<Problem.FieldError> errors() {
        return errors;
    }

    public Map<String, String> headers() {
        return headers;
    }
}
