package dev.ledgerline.transfers.support;

/** Reads the service's Prometheus metrics the way ops would: by name and label, from {@code /q/metrics}. */
public final class Metrics {

    private Metrics() {
    }

    /** The metrics page of the service under test. */
    public static String scrape() {
        return Management.given().get("/q/metrics").then().statusCode(200).extract().asString();
    }

    /** {@link #sum(String, String, String)} over a fresh {@link #scrape()}. */
    public static double sum(String name, String labelFragment) {
        return sum(scrape(), name, labelFragment);
    }

    /**
     * The sum of every sample of {@code name} (any labels) whose label set contains {@code labelFragment}
     * (e.g. {@code result="hit"}; empty for all), or {@code -1} when there is none.
     */
    public static double sum(String prometheusText, String name, String labelFragment) {
        double total = 0;
        boolean found = false;
        for (String line : prometheusText.split("\n")) {
            if ((line.startsWith(name + "{") || line.startsWith(name + " ")) && line.contains(labelFragment)) {
                total += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
                found = true;
            }
        }
        return found ? total : -1;
    }
}
