package io.flashsale.tools.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.Shape;
import java.awt.Stroke;
import java.awt.geom.AffineTransform;
import java.awt.geom.Ellipse2D;
import java.awt.geom.Line2D;
import java.awt.geom.Path2D;
import java.awt.geom.Rectangle2D;
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

/**
 * Line charts as PNG with the JDK alone (Java2D and ImageIO, headless): one or more panels side by
 * side, each with a title, axis labels, ticks, gridlines, a legend and named series. Meant for
 * benchmark curves such as throughput and p99 latency against the number of clients.
 *
 * <p>A series keeps its colour in every panel of one figure (colours go by series name, in order of
 * first appearance), so "service" in the throughput panel and in the latency panel read as one
 * thing. Dashed series are meant for references, such as a JDBC ceiling. Points whose x or y is NaN
 * or infinite (or not positive on a log axis) are skipped and break the line there.
 *
 * <p>Axes: a linear y axis whose data are all non-negative starts at zero; a log x axis is ticked at
 * powers of two (1, 2, 4, … clients), a log y axis at 1-2-5 steps per decade.
 *
 * <pre>{@code
 * LinePlot.write(Path.of("b1.png"), "B1 admission storm", List.of(
 *     new LinePlot.Panel("throughput", "clients", "orders/s", true, false, List.of(service, jdbcCeiling)),
 *     new LinePlot.Panel("p99 latency", "clients", "ms", true, true, List.of(serviceP99, jdbcP99))),
 *   1400, 520);
 * }</pre>
 */
public final class LinePlot {

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
      g.setRenderingHint(RenderingHints.KEY_STROKE_CONTROL, RenderingHints.VALUE_STROKE_PURE);
      g.setColor(Color.WHITE);
      g.fillRect(0, 0, width, height);

      // Sizes follow the image height, so a large render stays as legible as the usual ~500 px one.
      double scale = Math.max(0.75, Math.min(3.0, height / 520.0));
      Style style = new Style(scale);
      int top = 0;
      if (title != null && !title.isBlank()) {
        g.setFont(style.figureTitle);
        FontMetrics fm = g.getFontMetrics();
        g.setColor(TEXT);
        top = (int) Math.round(14 * scale) + fm.getHeight();
        g.drawString(title, (width - fm.stringWidth(title)) / 2, top - fm.getDescent());
      }
      Map<String, Color> colours = coloursByName(panels);
      int n = Math.max(1, panels.size());
      for (int i = 0; i < panels.size(); i++) {
        int x0 = i * width / n;
        int x1 = (i + 1) * width / n;
        new PanelPainter(g, style, panels.get(i), colours).paint(x0, top, x1 - x0, height - top);
      }
    } finally {
      g.dispose();
    }
    return image;
  }

  // ---- look

  private static final Color TEXT = new Color(0x22, 0x22, 0x22);
  private static final Color AXIS = new Color(0x55, 0x55, 0x55);
  private static final Color GRID = new Color(0xE4, 0xE4, 0xE4);
  private static final Color MUTED = new Color(0x88, 0x88, 0x88);

  /** Tableau 10: distinct hues that stay apart for the colour-blind and in greyscale print. */
  private static final List<Color> PALETTE = List.of(
      new Color(0x1F77B4), new Color(0xFF7F0E), new Color(0x2CA02C), new Color(0xD62728), new Color(0x9467BD),
      new Color(0x8C564B), new Color(0xE377C2), new Color(0x7F7F7F), new Color(0xBCBD22), new Color(0x17BECF));

  /** The colour of the {@code i}-th distinct series name of a figure (cycles after ten). */
  static Color colour(int i) {
    return PALETTE.get(i % PALETTE.size());
  }

  private static Map<String, Color> coloursByName(List<Panel> panels) {
    Map<String, Color> colours = new LinkedHashMap<>();
    for (Panel p : panels) {
      for (Series s : p.series()) colours.computeIfAbsent(s.name(), name -> colour(colours.size()));
    }
    return colours;
  }

  private static final class Style {
    final double scale;
    final Font figureTitle;
    final Font panelTitle;
    final Font label;
    final Font tick;
    final Font legend;
    final Stroke solid;
    final Stroke dashed;

    Style(double scale) {
      this.scale = scale;
      figureTitle = new Font(Font.SANS_SERIF, Font.BOLD, px(19));
      panelTitle = new Font(Font.SANS_SERIF, Font.BOLD, px(15));
      label = new Font(Font.SANS_SERIF, Font.PLAIN, px(13));
      tick = new Font(Font.SANS_SERIF, Font.PLAIN, px(12));
      legend = new Font(Font.SANS_SERIF, Font.PLAIN, px(12));
      float w = (float) (2.2 * scale);
      solid = new BasicStroke(w, BasicStroke.CAP_ROUND, BasicStroke.JOIN_ROUND);
      dashed = new BasicStroke(w, BasicStroke.CAP_BUTT, BasicStroke.JOIN_ROUND, 10f,
          new float[] {(float) (8 * scale), (float) (5 * scale)}, 0f);
    }

    int px(double v) {
      return (int) Math.round(v * scale);
    }
  }

  // ---- one panel

  private static final class PanelPainter {
    private final Graphics2D g;
    private final Style style;
    private final Panel panel;
    private final Map<String, Color> colours;

    PanelPainter(Graphics2D g, Style style, Panel panel, Map<String, Color> colours) {
      this.g = g;
      this.style = style;
      this.panel = panel;
      this.colours = colours;
    }

    void paint(int x, int y, int w, int h) {
      Axis xAxis = Axis.of(values(panel, 0, panel.logX()), panel.logX(), false);
      Axis yAxis = Axis.of(values(panel, 1, panel.logY()), panel.logY(), true);

      // Margins from what goes in them: the widest y tick label, the label heights.
      g.setFont(style.tick);
      FontMetrics tickFm = g.getFontMetrics();
      int yTickWidth = 0;
      for (double t : yAxis.ticks()) yTickWidth = Math.max(yTickWidth, tickFm.stringWidth(tickLabel(t)));
      g.setFont(style.label);
      FontMetrics labelFm = g.getFontMetrics();
      g.setFont(style.panelTitle);
      FontMetrics titleFm = g.getFontMetrics();

      int gap = style.px(6);
      int left = x + style.px(14) + labelFm.getHeight() + gap + yTickWidth + gap + style.px(4);
      int right = x + w - style.px(22);
      int top = y + style.px(10) + titleFm.getHeight() + style.px(8);
      int bottom = y + h - style.px(14) - labelFm.getHeight() - gap - tickFm.getHeight() - gap - style.px(4);
      Rectangle2D plot = new Rectangle2D.Double(left, top, Math.max(10, right - left), Math.max(10, bottom - top));

      drawTitle(x, w, y + style.px(10) + titleFm.getAscent());
      drawGridAndTicks(plot, xAxis, yAxis, tickFm);
      drawAxisLabels(plot, labelFm, x + style.px(14), y + h - style.px(14));
      boolean anyPoint = drawSeries(plot, xAxis, yAxis);
      g.setColor(AXIS);
      g.setStroke(new BasicStroke(1f));
      g.draw(plot);
      if (anyPoint) {
        drawLegend(plot, xAxis, yAxis);
      } else {
        g.setFont(style.label.deriveFont(Font.ITALIC));
        g.setColor(MUTED);
        String noData = "no data";
        FontMetrics fm = g.getFontMetrics();
        g.drawString(noData, (float) (plot.getCenterX() - fm.stringWidth(noData) / 2.0), (float) plot.getCenterY());
      }
    }

    private void drawTitle(int x, int w, int baseline) {
      String title = panel.title() == null ? "" : panel.title();
      g.setFont(style.panelTitle);
      g.setColor(TEXT);
      g.drawString(title, x + (w - g.getFontMetrics().stringWidth(title)) / 2, baseline);
    }

    private void drawGridAndTicks(Rectangle2D plot, Axis xAxis, Axis yAxis, FontMetrics tickFm) {
      g.setFont(style.tick);
      int tickLength = style.px(5);
      int gap = style.px(6);
      for (double t : xAxis.ticks()) {
        double px = plot.getX() + xAxis.fraction(t) * plot.getWidth();
        g.setColor(GRID);
        g.setStroke(new BasicStroke(1f));
        g.draw(new Line2D.Double(px, plot.getY(), px, plot.getMaxY()));
        g.setColor(AXIS);
        g.draw(new Line2D.Double(px, plot.getMaxY(), px, plot.getMaxY() + tickLength));
        String label = tickLabel(t);
        g.setColor(TEXT);
        g.drawString(label, (float) (px - tickFm.stringWidth(label) / 2.0),
            (float) (plot.getMaxY() + tickLength + gap / 2.0 + tickFm.getAscent()));
      }
      for (double t : yAxis.ticks()) {
        double py = plot.getMaxY() - yAxis.fraction(t) * plot.getHeight();
        g.setColor(GRID);
        g.setStroke(new BasicStroke(1f));
        g.draw(new Line2D.Double(plot.getX(), py, plot.getMaxX(), py));
        g.setColor(AXIS);
        g.draw(new Line2D.Double(plot.getX() - tickLength, py, plot.getX(), py));
        String label = tickLabel(t);
        g.setColor(TEXT);
        g.drawString(label, (float) (plot.getX() - tickLength - gap / 2.0 - tickFm.stringWidth(label)),
            (float) (py + tickFm.getAscent() / 2.0 - 1));
      }
    }

    private void drawAxisLabels(Rectangle2D plot, FontMetrics labelFm, int yLabelLeft, int xLabelBaseline) {
      g.setFont(style.label);
      g.setColor(TEXT);
      String xLabel = axisLabel(panel.xLabel(), panel.logX());
      g.drawString(xLabel, (float) (plot.getCenterX() - labelFm.stringWidth(xLabel) / 2.0), xLabelBaseline);
      String yLabel = axisLabel(panel.yLabel(), panel.logY());
      AffineTransform saved = g.getTransform();
      g.translate(yLabelLeft + labelFm.getAscent(), plot.getCenterY() + labelFm.stringWidth(yLabel) / 2.0);
      g.rotate(-Math.PI / 2);
      g.drawString(yLabel, 0, 0);
      g.setTransform(saved);
    }

    private static String axisLabel(String label, boolean log) {
      String text = label == null ? "" : label;
      return log ? text + ", log scale" : text;
    }

    /** Draws every series; false when there was no point to draw at all. */
    private boolean drawSeries(Rectangle2D plot, Axis xAxis, Axis yAxis) {
      Shape savedClip = g.getClip();
      // A little slack so markers on the edge of the range are not cut in half.
      double slack = style.px(5);
      g.clip(new Rectangle2D.Double(plot.getX() - slack, plot.getY() - slack,
          plot.getWidth() + 2 * slack, plot.getHeight() + 2 * slack));
      boolean anyPoint = false;
      double radius = 3.2 * style.scale;
      for (Series s : panel.series()) {
        Path2D line = new Path2D.Double();
        List<double[]> marks = new ArrayList<>();
        boolean penDown = false;
        for (double[] p : s.points()) {
          if (!drawable(p[0], panel.logX()) || !drawable(p[1], panel.logY())) {
            penDown = false; // a gap, as an honest line would show a missing measurement
            continue;
          }
          double px = plot.getX() + xAxis.fraction(p[0]) * plot.getWidth();
          double py = plot.getMaxY() - yAxis.fraction(p[1]) * plot.getHeight();
          if (penDown) line.lineTo(px, py);
          else line.moveTo(px, py);
          penDown = true;
          marks.add(new double[] {px, py});
        }
        if (marks.isEmpty()) continue;
        anyPoint = true;
        g.setColor(colours.get(s.name()));
        g.setStroke(s.dashed() ? style.dashed : style.solid);
        g.draw(line);
        for (double[] m : marks) g.fill(new Ellipse2D.Double(m[0] - radius, m[1] - radius, 2 * radius, 2 * radius));
      }
      g.setClip(savedClip);
      return anyPoint;
    }

    private void drawLegend(Rectangle2D plot, Axis xAxis, Axis yAxis) {
      List<Series> entries = panel.series().stream()
          .filter(s -> s.points().stream().anyMatch(p -> drawable(p[0], panel.logX()) && drawable(p[1], panel.logY())))
          .toList();
      g.setFont(style.legend);
      FontMetrics fm = g.getFontMetrics();
      int pad = style.px(8);
      int sample = style.px(30);
      int row = fm.getHeight() + style.px(3);
      int textWidth = entries.stream().mapToInt(s -> fm.stringWidth(s.name())).max().orElse(0);
      double boxW = pad + sample + style.px(8) + textWidth + pad;
      double boxH = pad + entries.size() * row - style.px(3) + pad;
      Rectangle2D box = leastCrowdedCorner(plot, boxW, boxH, xAxis, yAxis);

      g.setColor(new Color(255, 255, 255, 225));
      g.fill(box);
      g.setColor(new Color(0xCC, 0xCC, 0xCC));
      g.setStroke(new BasicStroke(1f));
      g.draw(box);
      double radius = 3.2 * style.scale;
      for (int i = 0; i < entries.size(); i++) {
        Series s = entries.get(i);
        double rowTop = box.getY() + pad + i * row;
        double midY = rowTop + fm.getHeight() / 2.0;
        double x0 = box.getX() + pad;
        g.setColor(colours.get(s.name()));
        g.setStroke(s.dashed() ? style.dashed : style.solid);
        g.draw(new Line2D.Double(x0, midY, x0 + sample, midY));
        g.fill(new Ellipse2D.Double(x0 + sample / 2.0 - radius, midY - radius, 2 * radius, 2 * radius));
        g.setColor(TEXT);
        g.drawString(s.name(), (float) (x0 + sample + style.px(8)), (float) (rowTop + fm.getAscent()));
      }
    }

    /** The inner corner of the plot (top left first) whose legend box would cover the fewest line samples. */
    private Rectangle2D leastCrowdedCorner(Rectangle2D plot, double boxW, double boxH, Axis xAxis, Axis yAxis) {
      double inset = style.px(8);
      double leftX = plot.getX() + inset;
      double rightX = plot.getMaxX() - inset - boxW;
      double topY = plot.getY() + inset;
      double bottomY = plot.getMaxY() - inset - boxH;
      List<Rectangle2D> corners = List.of(
          new Rectangle2D.Double(leftX, topY, boxW, boxH), new Rectangle2D.Double(rightX, topY, boxW, boxH),
          new Rectangle2D.Double(rightX, bottomY, boxW, boxH), new Rectangle2D.Double(leftX, bottomY, boxW, boxH));
      List<double[]> samples = lineSamples(plot, xAxis, yAxis);
      Rectangle2D best = corners.get(0);
      long fewest = Long.MAX_VALUE;
      for (Rectangle2D c : corners) {
        Rectangle2D margin = new Rectangle2D.Double(c.getX() - 4, c.getY() - 4, c.getWidth() + 8, c.getHeight() + 8);
        long covered = samples.stream().filter(p -> margin.contains(p[0], p[1])).count();
        if (covered < fewest) {
          fewest = covered;
          best = c;
        }
      }
      return best;
    }

    /** Points along every drawn segment, in pixels, to tell how much of the lines a box would hide. */
    private List<double[]> lineSamples(Rectangle2D plot, Axis xAxis, Axis yAxis) {
      List<double[]> samples = new ArrayList<>();
      for (Series s : panel.series()) {
        double[] previous = null;
        for (double[] p : s.points()) {
          if (!drawable(p[0], panel.logX()) || !drawable(p[1], panel.logY())) {
            previous = null;
            continue;
          }
          double[] px = {plot.getX() + xAxis.fraction(p[0]) * plot.getWidth(),
              plot.getMaxY() - yAxis.fraction(p[1]) * plot.getHeight()};
          if (previous != null) {
            for (int k = 1; k < 20; k++) {
              double t = k / 20.0;
              samples.add(new double[] {previous[0] + t * (px[0] - previous[0]), previous[1] + t * (px[1] - previous[1])});
            }
          }
          samples.add(px);
          previous = px;
        }
      }
      return samples;
    }
  }

  private static boolean drawable(double v, boolean log) {
    return Double.isFinite(v) && (!log || v > 0);
  }

  /** The drawable values of one coordinate (0 = x, 1 = y) over all series of a panel. */
  private static double[] values(Panel panel, int coordinate, boolean log) {
    return panel.series().stream()
        .flatMap(s -> s.points().stream())
        .filter(p -> drawable(p[0], panel.logX()) && drawable(p[1], panel.logY()))
        .mapToDouble(p -> p[coordinate])
        .toArray();
  }

  // ---- axes

  /** A data range and its ticks; {@link #fraction} maps a value to 0..1 along the axis. */
  record Axis(double lo, double hi, boolean log, List<Double> ticks) {

    double fraction(double v) {
      return log ? (Math.log(v) - Math.log(lo)) / (Math.log(hi) - Math.log(lo)) : (v - lo) / (hi - lo);
    }

    /** Range and ticks for these values; a y axis is zero-based when linear and non-negative. */
    static Axis of(double[] values, boolean log, boolean isY) {
      double min = Double.POSITIVE_INFINITY;
      double max = Double.NEGATIVE_INFINITY;
      for (double v : values) {
        min = Math.min(min, v);
        max = Math.max(max, v);
      }
      if (values.length == 0) {
        min = log ? 1 : 0;
        max = log ? 10 : 1;
      }
      if (log) {
        if (min == max) {
          min /= 2;
          max *= 2;
        }
        // 5% of the log span either side, so the end points sit inside the frame.
        double pad = Math.pow(max / min, 0.05);
        double lo = min / pad;
        double hi = max * pad;
        return new Axis(lo, hi, true, isY ? decadeTicks(lo, hi) : powerOfTwoTicks(lo, hi));
      }
      if (min == max) {
        double half = min == 0 ? 0.5 : Math.abs(min) / 2;
        min -= half;
        max += half;
      }
      double span = max - min;
      boolean zeroBased = isY && min >= 0;
      double lo = zeroBased ? 0 : min - 0.04 * span;
      double hi = max + (isY ? 0.06 : 0.04) * (max - lo);
      return new Axis(lo, hi, false, linearTicks(lo, hi));
    }

    /** Multiples of a 1-2-5 step, about five to eight of them. */
    static List<Double> linearTicks(double lo, double hi) {
      double step = niceStep((hi - lo) / 6);
      List<Double> ticks = new ArrayList<>();
      for (long k = (long) Math.ceil(lo / step - 1e-9); k * step <= hi + 1e-9 * step; k++) ticks.add(k * step);
      return ticks;
    }

    static double niceStep(double rough) {
      double magnitude = Math.pow(10, Math.floor(Math.log10(rough)));
      double f = rough / magnitude;
      double nice = f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10;
      return nice * magnitude;
    }

    static List<Double> powerOfTwoTicks(double lo, double hi) {
      List<Double> all = new ArrayList<>();
      for (int k = (int) Math.ceil(log2(lo) - 1e-9); Math.pow(2, k) <= hi * (1 + 1e-9); k++) all.add(Math.pow(2, k));
      if (all.size() < 2) return linearTicks(lo, hi);
      int every = (all.size() + 9) / 10; // at most ten labels
      List<Double> ticks = new ArrayList<>();
      for (int i = 0; i < all.size(); i += every) ticks.add(all.get(i));
      return ticks;
    }

    static List<Double> decadeTicks(double lo, double hi) {
      List<Double> oneTwoFive = new ArrayList<>();
      List<Double> decades = new ArrayList<>();
      for (int e = (int) Math.floor(Math.log10(lo)); Math.pow(10, e) <= hi; e++) {
        for (int m : new int[] {1, 2, 5}) {
          double v = m * Math.pow(10, e);
          if (v < lo * (1 - 1e-9) || v > hi * (1 + 1e-9)) continue;
          oneTwoFive.add(v);
          if (m == 1) decades.add(v);
        }
      }
      if (oneTwoFive.size() <= 12 && oneTwoFive.size() >= 3) return oneTwoFive;
      if (oneTwoFive.size() > 12) return decades;
      return linearTicks(lo, hi); // less than a decade: plain steps read better
    }

    private static double log2(double v) {
      return Math.log(v) / Math.log(2);
    }
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

  private LinePlot() {}
}
