package io.flashsale.tools.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.OutputStream;
import java.math.BigDecimal;
import java.math.MathContext;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import javax.imageio.ImageIO;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.XYStyler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * Line charts as PNG, drawn by XChart (headless): one or more panels side by side under a figure
 * title, each panel an XChart line chart with its title, axis titles, legend and named series.
 * Meant for benchmark curves such as throughput and p99 latency against the number of clients.
 *
 * <p>A series keeps its colour in every panel of one figure (colours go by series name, in order of
 * first appearance), so "service" in the throughput panel and in the latency panel read as one
 * thing. Dashed series are meant for references, such as a JDBC ceiling. Points whose x or y is NaN
 * or infinite (or not positive on a log axis) are left out; a missing y breaks the line there.
 *
 * <pre>{@code
 * Charts.write(Path.of("b1.png"), "B1 admission storm", List.of(
 *     new Charts.Panel("throughput", "clients", "orders/s", true, false, List.of(service, jdbcCeiling)),
 *     new Charts.Panel("p99 latency", "clients", "ms", true, true, List.of(serviceP99, jdbcP99))),
 *   1400, 520);
 * }</pre>
 */
public final class Charts {

  static {
    // Rendering into a BufferedImage needs no display; say so before AWT starts, unless the caller did.
    if (System.getProperty("java.awt.headless") == null) System.setProperty("java.awt.headless", "true");
  }

  /** One named line; each point is {@code {x, y}}, drawn in the given order. */
  public record Series(String name, List<double[]> points, boolean dashed) {
    public Series {
      Objects.requireNonNull(name, "name");
      points = List.copyOf(points);
      for (double[] p : points) {
        if (p.length != 2) throw new IllegalArgumentException("a point is {x, y}, got " + p.length + " values");
      }
    }

    /** A series from parallel arrays of x and y values. */
    public static Series of(String name, double[] xs, double[] ys, boolean dashed) {
      if (xs.length != ys.length) throw new IllegalArgumentException(xs.length + " x values, " + ys.length + " y values");
      List<double[]> points = new ArrayList<>();
      for (int i = 0; i < xs.length; i++) points.add(new double[] {xs[i], ys[i]});
      return new Series(name, points, dashed);
    }
  }

  /** One chart of the figure: its own axes (linear or log each) and series. */
  public record Panel(String title, String xLabel, String yLabel, boolean logX, boolean logY, List<Series> series) {
    public Panel {
      series = List.copyOf(series);
    }
  }

  /** Tableau 10: distinct hues that stay apart for the colour-blind and in greyscale print. */
  private static final List<Color> PALETTE = List.of(
      new Color(0x1F77B4), new Color(0xFF7F0E), new Color(0x2CA02C), new Color(0xD62728), new Color(0x9467BD),
      new Color(0x8C564B), new Color(0xE377C2), new Color(0x7F7F7F), new Color(0xBCBD22), new Color(0x17BECF));

  private static final Color TEXT = new Color(0x22, 0x22, 0x22);

  /** The colour of the {@code i}-th distinct series name of a figure (cycles after ten). */
  public static Color colour(int i) {
    return PALETTE.get(i % PALETTE.size());
  }

  /** Renders the figure ({@link #render}) and writes it to {@code png}, replacing any file there. */
  public static void write(Path png, String title, List<Panel> panels, int width, int height) throws IOException {
    BufferedImage image = render(title, panels, width, height);
    try (OutputStream out = Files.newOutputStream(png)) {
      if (!ImageIO.write(image, "png", out)) throw new IOException("no PNG writer in this JDK");
    }
  }

  /** The figure: an optional title over the panels, which share the width equally. */
  public static BufferedImage render(String title, List<Panel> panels, int width, int height) {
    if (width < 100 || height < 100) throw new IllegalArgumentException("too small: " + width + "x" + height);
    BufferedImage image = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = image.createGraphics();
    try {
      g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
      g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
      g.setColor(Color.WHITE);
      g.fillRect(0, 0, width, height);
      // Sizes follow the image height, so a large render stays as legible as the usual ~500 px one.
      double scale = Math.max(0.75, Math.min(3.0, height / 520.0));
      int top = 0;
      if (title != null && !title.isBlank()) {
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, (int) Math.round(19 * scale)));
        FontMetrics fm = g.getFontMetrics();
        g.setColor(TEXT);
        top = (int) Math.round(12 * scale) + fm.getHeight();
        g.drawString(title, (width - fm.stringWidth(title)) / 2, top - fm.getDescent());
      }
      Map<String, Color> colours = coloursByName(panels);
      int n = Math.max(1, panels.size());
      for (int i = 0; i < panels.size(); i++) {
        int x0 = i * width / n;
        int x1 = (i + 1) * width / n;
        XYChart chart = chart(panels.get(i), colours, x1 - x0, height - top, scale);
        g.drawImage(BitmapEncoder.getBufferedImage(chart), x0, top, null);
      }
    } finally {
      g.dispose();
    }
    return image;
  }

  /** One panel as an XChart line chart of the given size. */
  static XYChart chart(Panel panel, Map<String, Color> colours, int width, int height, double scale) {
    XYChart chart = new XYChartBuilder().width(width).height(height)
        .title(panel.title() == null ? "" : panel.title())
        .xAxisTitle(axisLabel(panel.xLabel(), panel.logX()))
        .yAxisTitle(axisLabel(panel.yLabel(), panel.logY()))
        .build();
    XYStyler styler = chart.getStyler();
    styler.setChartBackgroundColor(Color.WHITE);
    styler.setPlotBackgroundColor(Color.WHITE);
    styler.setPlotGridLinesColor(new Color(0xE4, 0xE4, 0xE4));
    styler.setPlotBorderColor(new Color(0x55, 0x55, 0x55));
    styler.setChartFontColor(TEXT);
    styler.setChartTitleBoxVisible(false);
    styler.setChartTitleFont(new Font(Font.SANS_SERIF, Font.BOLD, (int) Math.round(15 * scale)));
    styler.setAxisTitleFont(new Font(Font.SANS_SERIF, Font.PLAIN, (int) Math.round(13 * scale)));
    styler.setAxisTickLabelsFont(new Font(Font.SANS_SERIF, Font.PLAIN, (int) Math.round(12 * scale)));
    styler.setLegendFont(new Font(Font.SANS_SERIF, Font.PLAIN, (int) Math.round(12 * scale)));
    styler.setLegendPosition(legendCorner(panel));
    styler.setLegendBorderColor(new Color(0xCC, 0xCC, 0xCC));
    styler.setLegendBackgroundColor(new Color(255, 255, 255, 225));
    styler.setXAxisLogarithmic(panel.logX());
    styler.setYAxisLogarithmic(panel.logY());
    // a log axis over two decades or more is labelled at its decades only, a shorter one at 1..9 of each
    styler.setXAxisLogarithmicDecadeOnly(decades(panel, 0) >= 2);
    styler.setYAxisLogarithmicDecadeOnly(decades(panel, 1) >= 2);
    // XChart places log ticks itself and only with its own labels; linear ticks read as people write them
    if (!panel.logX()) styler.setxAxisTickLabelsFormattingFunction(Charts::tickLabel);
    if (!panel.logY()) styler.setyAxisTickLabelsFormattingFunction(Charts::tickLabel);
    styler.setMarkerSize((int) Math.round(7 * scale));
    double[] yRange = range(panel, 1);
    if (!panel.logY() && yRange != null && yRange[0] >= 0) styler.setYAxisMin(0.0); // a linear count starts at zero

    boolean anyPoint = false;
    for (Series s : panel.series()) {
      double[][] xy = drawable(s, panel.logX(), panel.logY());
      if (xy == null) continue; // nothing to draw: left out of the chart and its legend
      anyPoint = true;
      XYSeries line = chart.addSeries(s.name(), xy[0], xy[1]);
      Color colour = colours.getOrDefault(s.name(), colour(0));
      line.setLineColor(colour);
      line.setMarkerColor(colour);
      line.setMarker(SeriesMarkers.CIRCLE);
      float w = (float) (2.2 * scale);
      line.setLineStyle(s.dashed()
          ? new BasicStroke(w, BasicStroke.CAP_BUTT, BasicStroke.JOIN_ROUND, 10f,
              new float[] {(float) (8 * scale), (float) (5 * scale)}, 0f)
          : new BasicStroke(w, BasicStroke.CAP_ROUND, BasicStroke.JOIN_ROUND));
    }
    if (!anyPoint) {
      // XChart needs a series to lay out its axes: an invisible one, and the title says why it is empty.
      chart.setTitle((panel.title() == null || panel.title().isBlank() ? "" : panel.title() + ": ") + "no data");
      XYSeries none = chart.addSeries(" ", new double[] {1, 2}, new double[] {1, 2});
      none.setLineColor(new Color(0, 0, 0, 0));
      none.setMarker(SeriesMarkers.NONE);
      none.setShowInLegend(false);
      styler.setLegendVisible(false);
    }
    return chart;
  }

  /**
   * The points XChart can draw, as {xs, ys}: a point with no usable x is left out, one with no
   * usable y kept as NaN so the line breaks there; null when no point is left at all.
   */
  static double[][] drawable(Series s, boolean logX, boolean logY) {
    List<double[]> kept = new ArrayList<>();
    boolean any = false;
    for (double[] p : s.points()) {
      if (!usable(p[0], logX)) continue;
      boolean y = usable(p[1], logY);
      kept.add(new double[] {p[0], y ? p[1] : Double.NaN});
      any |= y;
    }
    if (!any) return null;
    double[] xs = new double[kept.size()];
    double[] ys = new double[kept.size()];
    for (int i = 0; i < kept.size(); i++) {
      xs[i] = kept.get(i)[0];
      ys[i] = kept.get(i)[1];
    }
    return new double[][] {xs, ys};
  }

  /** The powers of ten within the drawable values of one coordinate (0 = x, 1 = y) of the panel. */
  static int decades(Panel panel, int coordinate) {
    double[] range = range(panel, coordinate);
    if (range == null || range[0] <= 0) return 0;
    return (int) (Math.floor(Math.log10(range[1]) + 1e-9) - Math.ceil(Math.log10(range[0]) - 1e-9) + 1);
  }

  /**
   * The inner corner of the plot (top left first) with the fewest points near it, for the legend:
   * a rising curve leaves the top left free, a falling one the top right.
   */
  static Styler.LegendPosition legendCorner(Panel panel) {
    double[] xr = range(panel, 0);
    double[] yr = range(panel, 1);
    if (xr == null || yr == null) return Styler.LegendPosition.InsideNW;
    List<Styler.LegendPosition> corners = List.of(Styler.LegendPosition.InsideNW, Styler.LegendPosition.InsideNE,
        Styler.LegendPosition.InsideSE, Styler.LegendPosition.InsideSW);
    int[] near = new int[corners.size()];
    for (Series s : panel.series()) {
      for (double[] p : s.points()) {
        if (!usable(p[0], panel.logX()) || !usable(p[1], panel.logY())) continue;
        double fx = fraction(p[0], xr, panel.logX());
        double fy = fraction(p[1], yr, panel.logY());
        if (fx < 0.45 && fy > 0.55) near[0]++;
        if (fx > 0.55 && fy > 0.55) near[1]++;
        if (fx > 0.55 && fy < 0.45) near[2]++;
        if (fx < 0.45 && fy < 0.45) near[3]++;
      }
    }
    int best = 0;
    for (int i = 1; i < near.length; i++) if (near[i] < near[best]) best = i;
    return corners.get(best);
  }

  /** {min, max} of the drawable values of one coordinate over the panel's series; null when there are none. */
  private static double[] range(Panel panel, int coordinate) {
    double min = Double.POSITIVE_INFINITY;
    double max = Double.NEGATIVE_INFINITY;
    for (Series s : panel.series()) {
      for (double[] p : s.points()) {
        if (!usable(p[0], panel.logX()) || !usable(p[1], panel.logY())) continue;
        min = Math.min(min, p[coordinate]);
        max = Math.max(max, p[coordinate]);
      }
    }
    return min > max ? null : new double[] {min, max};
  }

  private static double fraction(double v, double[] range, boolean log) {
    if (range[1] == range[0]) return 0.5;
    return log ? (Math.log(v) - Math.log(range[0])) / (Math.log(range[1]) - Math.log(range[0]))
        : (v - range[0]) / (range[1] - range[0]);
  }

  private static boolean usable(double v, boolean log) {
    return Double.isFinite(v) && (!log || v > 0);
  }

  private static Map<String, Color> coloursByName(List<Panel> panels) {
    Map<String, Color> colours = new LinkedHashMap<>();
    for (Panel p : panels) {
      for (Series s : p.series()) colours.computeIfAbsent(s.name(), name -> colour(colours.size()));
    }
    return colours;
  }

  private static String axisLabel(String label, boolean log) {
    String text = label == null ? "" : label;
    return log && !text.contains("log") ? text + ", log scale" : text;
  }

  /** A tick number as people write it: 0.5, 20, 2500, 16k, 1.5M. */
  static String tickLabel(double v) {
    double a = Math.abs(v);
    if (a < 1e-12) return "0";
    if (a >= 1e6) return fourDigits(v / 1e6) + "M";
    if (a >= 1e4) return fourDigits(v / 1e3) + "k";
    return fourDigits(v);
  }

  private static String fourDigits(double v) {
    return new BigDecimal(v).round(new MathContext(4)).stripTrailingZeros().toPlainString();
  }

  private Charts() {}
}
