package dev.ledgerline.transfers.problem;

import java.util.List;
import java.util.Map;

/** A domain outcome that becomes a problem document; {@code api.ProblemMapper} is the only place that renders it. */
public class ProblemException extends RuntimeException {

    private final ProblemType type;
    private final List<Problem.FieldError> errors;
    private final Map<String, String> headers;
    private final String transferStatus;

    public ProblemException(ProblemType type, String detail) {
        this(type, detail, null, Map.of());
    }

    public ProblemException(ProblemType type, String detail, List<Problem.FieldError> errors, Map<String, String> headers) {
        this(type, detail, errors, headers, null);
    }

    /** {@code transferStatus}: the status of the transfer the refused operation was about (the problem's extension member). */
    public ProblemException(ProblemType type, String detail, List<Problem.FieldError> errors, Map<String, String> headers,
                            String transferStatus) {
        super(detail, null, false, false);
        this.type = type;
        this.errors = errors;
        this.headers = headers;
        this.transferStatus = transferStatus;
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

    public String transferStatus() {
        return transferStatus;
    }
}
