package dev.ledgerline.bench;

import javax.imageio.ImageIO;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Latency by percentile, one line per run, HdrHistogram style: x is the percentile on a log scale of
 * 1/(1-p) (50 %, 90 %, 99 %, 99.9 %, 99.99 %), y is the latency in ms on a log scale. Headless Java2D.
 * Usage: {@code chart OUT.png TITLE LABEL=FILE.hgrm ...}
 */
final class Chart {

    private static final Color[] COLORS = {
            new Color(0x1f77b4), new Color(0xff7f0e), new Color(0x2ca02c), new Color(0xd62728), new Color(0x9467bd),
            new Color(0x8c564b), new Color(0xe377c2), new Color(0x7f7f7f), new Color(0xbcbd22), new Color(0x17becf),
            Color.BLACK, new Color(0xc49c00)};

    record Series(String label, List<double[]> points) {
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("java.awt.headless", "true");
        String out = args[0];
        String title = args[1];
        List<Series> series = new ArrayList<>();
        for (int i = 2; i < args.length; i++) {
            String label = args[i].substring(0, args[i].indexOf('='));
            Path file = Path.of(args[i].substring(args[i].indexOf('=') + 1));
            List<double[]> points = new ArrayList<>();
            for (String line : Files.readAllLines(file)) {
                String[] f = line.trim().split("\\s+");
                if (f.length != 4 || line.trim().startsWith("#") || line.contains("Value")) {
                    continue;
                }
                try {
                    double value = Double.parseDouble(f[0]);
                    double percentile = Double.parseDouble(f[1]);
                    if (percentile >= 1.0) {
                        continue;
                    }
                    points.add(new double[]{Math.log10(1 / (1 - percentile)), Math.max(value, 0.01)});
                } catch (NumberFormatException ignored) {
                    // header lines
                }
            }
            series.add(new Series(label, points));
        }

        int w = 1200, h = 720, left = 90, right = 330, top = 60, bottom = 70;
        int pw = w - left - right, ph = h - top - bottom;
        double xMax = 4; // 99.99 %
        double yMin = 0.1, yMax = 10;
        for (Series s : series) {
            for (double[] p : s.points) {
                if (p[0] <= xMax) {
                    yMax = Math.max(yMax, p[1]);
                    yMin = Math.min(yMin, p[1]);
                }
            }
        }
        double lyMin = Math.floor(Math.log10(yMin)), lyMax = Math.ceil(Math.log10(yMax));

        BufferedImage img = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, w, h);
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 18));
        g.drawString(title, left, 35);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));

        // grid: percentiles
        String[] px = {"0%", "90%", "99%", "99.9%", "99.99%"};
        for (int i = 0; i <= 4; i++) {
            int x = left + (int) (pw * i / xMax);
            g.setColor(new Color(0xdddddd));
            g.drawLine(x, top, x, top + ph);
            g.setColor(Color.BLACK);
            g.drawString(px[i], x - 15, top + ph + 20);
        }
        g.drawString("percentile (latency measured from the intended start: no coordinated omission)", left + 60, top + ph + 50);
        // grid: latency decades
        for (double d = lyMin; d <= lyMax; d++) {
            int y = top + ph - (int) (ph * (d - lyMin) / (lyMax - lyMin));
            g.setColor(new Color(0xdddddd));
            g.drawLine(left, y, left + pw, y);
            g.setColor(Color.BLACK);
            double v = Math.pow(10, d);
            g.drawString(v >= 1 ? String.format(Locale.ROOT, "%.0f ms", v) : String.format(Locale.ROOT, "%.1f ms", v), left - 70, y + 5);
        }
        g.drawRect(left, top, pw, ph);

        g.setStroke(new BasicStroke(2.2f));
        for (int si = 0; si < series.size(); si++) {
            Series s = series.get(si);
            Color c = COLORS[si % COLORS.length];
            g.setColor(c);
            int prevX = -1, prevY = -1;
            for (double[] p : s.points) {
                if (p[0] > xMax) {
                    break;
                }
                int x = left + (int) (pw * p[0] / xMax);
                int y = top + ph - (int) (ph * (Math.log10(p[1]) - lyMin) / (lyMax - lyMin));
                if (prevX >= 0) {
                    g.drawLine(prevX, prevY, x, y);
                }
                prevX = x;
                prevY = y;
            }
            int ly = top + 10 + si * 22;
            g.fillRect(left + pw + 15, ly, 18, 4);
            g.setColor(Color.BLACK);
            g.drawString(s.label, left + pw + 40, ly + 7);
        }
        g.dispose();
        ImageIO.write(img, "png", new File(out));
        System.out.println("wrote " + out);
    }

    private Chart() {
    }
}
