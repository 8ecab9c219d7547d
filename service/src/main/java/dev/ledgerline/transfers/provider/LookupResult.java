package dev.ledgerline.transfers.provider;

/** What the provider knows of a reference. */
public record LookupResult(Kind kind, String reason) {

    public enum Kind { COMPLETED, REJECTED, NOT_FOUND }

    public static LookupResult completed() {
        return new LookupResult(Kind.COMPLETED, null);
    }

    public static LookupResult rejected(String reason) {
        return new LookupResult(Kind.REJECTED, reason);
    }

    public static LookupResult notFound() {
        return new LookupResult(Kind.NOT_FOUND, null);
    }
}
