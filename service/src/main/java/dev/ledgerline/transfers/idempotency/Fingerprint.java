package dev.ledgerline.transfers.idempotency;

import dev.ledgerline.transfers.account.CreditRequest;
import dev.ledgerline.transfers.hashing.Sha256;
import dev.ledgerline.transfers.transfer.TransferRequest;

import java.text.Normalizer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * SHA-256 over a canonical form of the validated request: fixed field order, normalised values
 * (IBAN without spaces, upper case; the name in Unicode NFC; a blank description is no description),
 * each field length-prefixed so no two requests share a form.
 * Field order and whitespace in the client's JSON therefore do not matter, nor does whether a name's accents
 * were typed as composed or decomposed characters, nor whether "no description" was sent as absent, {@code null},
 * {@code ""} or spaces.
 *
 * <p>The form is byte for byte the one of the first release for every request whose meaning did not change, so
 * stored fingerprints stay valid. Only two kinds of transfers were stored under another form: a blank description
 * as {@code ""}, and a name sent decomposed (NFD) as sent. {@link #sameRequest} accepts those forms too, so such a
 * transfer still replays, whichever equal form the client sends now.
 *
 * <p>A scheduled request's {@code executeAt} is part of the form, as the instant it names (UTC, so the offset it was
 * written with does not matter): the same key with another time is another request (422). A request without one has
 * the form it always had, so the rows and entries stored before scheduling existed keep matching.
 */
public final class Fingerprint {

    private Fingerprint() {
    }

    public static String of(TransferRequest request) {
        return of(request, name(request), description(request));
    }

    /**
     * Whether a stored fingerprint (of a row or a Redis entry) is this request's: {@code fingerprint}, its canonical
     * one, or one of the forms that transfers stored before blank descriptions and composed names counted as the same.
     */
    public static boolean sameRequest(String stored, String fingerprint, TransferRequest request) {
        return stored.equals(fingerprint) || earlierForms(request).contains(stored);
    }

    /** The fingerprints an equal request was stored under before: {@code ""} for no description, the NFD name. */
    static List<String> earlierForms(TransferRequest request) {
        String name = name(request);
        String description = description(request);
        String decomposed = Normalizer.normalize(name, Normalizer.Form.NFD);
        List<String> names = decomposed.equals(name) ? List.of(name) : List.of(name, decomposed);
        List<String> descriptions = description == null ? Arrays.asList(null, "") : List.of(description);
        List<String> forms = new ArrayList<>();
        for (String n : names) {
            for (String d : descriptions) {
                if (!(n.equals(name) && Objects.equals(d, description))) {
                    forms.add(of(request, n, d));
                }
            }
        }
        return forms;
    }

    private static String of(TransferRequest request, String name, String description) {
        StringBuilder canonical = new StringBuilder("transfer/v1");
        field(canonical, Long.toString(request.amount()));
        field(canonical, request.currency());
        field(canonical, request.destination().iban());
        field(canonical, name);
        field(canonical, description == null ? "\u0000" : description);
        if (request.executeAt() != null) {
            field(canonical, "executeAt=" + request.executeAt().toInstant());
        }
        return Sha256.hex(canonical.toString());
    }

    /**
     * A credit's fingerprint: the credited principal, amount, currency and reference. The same key booking another
     * principal, amount or reference is another request (422).
     */
    public static String of(String principal, CreditRequest request) {
        StringBuilder canonical = new StringBuilder("credit/v1");
        field(canonical, principal);
        field(canonical, Long.toString(request.amount()));
        field(canonical, request.currency());
        field(canonical, request.reference());
        return Sha256.hex(canonical.toString());
    }

    /** The name in NFC, the form the parser stores and the provider is sent. */
    private static String name(TransferRequest request) {
        return Normalizer.normalize(request.destination().name(), Normalizer.Form.NFC);
    }

    /** A blank description is no description. */
    private static String description(TransferRequest request) {
        String description = request.description();
        return description == null || description.isBlank() ? null : description;
    }

    private static void field(StringBuilder out, String value) {
        out.append('|').append(value.length()).append(':').append(value);
    }
}
