package io.flashsale.tools.bench;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flashsale.tools.bench.Charts.Panel;
import io.flashsale.tools.bench.Charts.Series;
import java.awt.Color;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.knowm.xchart.style.Styler;
import org.junit.jupiter.api.io.TempDir;

/** The PNG the benchmark curves are drawn in: a decodable image of the asked size with its lines in their colours. */
class ChartsTest {
  private static final double[] CLIENTS = {1, 4, 16, 64, 256};

  @TempDir Path dir;

  @Test
  void theWrittenPngDecodesAtTheAskedSizeWithEachSeriesInItsColourInEveryPanel() throws Exception {
    Series service = Series.of("service", CLIENTS, new double[] {180, 650, 1400, 1650, 1600}, false);
    Series ceiling = Series.of("JDBC ceiling", CLIENTS, new double[] {900, 3200, 6100, 6600, 6500}, true);
    Series serviceP99 = Series.of("service", CLIENTS, new double[] {9, 14, 31, 120, 480}, false);
    Series ceilingP99 = Series.of("JDBC ceiling", CLIENTS, new double[] {1.5, 2.2, 4.8, 18, 70}, true);
    Path png = dir.resolve("sweep.png");

    Charts.write(png, "B1 admission storm", List.of(
        new Panel("throughput", "clients", "orders/s", true, false, List.of(service, ceiling)),
        new Panel("p99 latency", "clients", "ms", true, true, List.of(serviceP99, ceilingP99))), 1200, 480);

    byte[] bytes = Files.readAllBytes(png);
    assertEquals((byte) 0x89, bytes[0], "PNG signature");
    assertEquals("PNG", new String(bytes, 1, 3, java.nio.charset.StandardCharsets.US_ASCII));
    BufferedImage image = ImageIO.read(png.toFile());
    assertNotNull(image, "ImageIO decodes it");
    assertEquals(1200, image.getWidth());
    assertEquals(480, image.getHeight());
    assertTrue(pixelsOf(image, Color.WHITE, 0, 1200) > 1200 * 480 / 2, "mostly white background");
    // One colour per series name, the same in both panels: each shows up in the left and the right half.
    for (int i = 0; i < 2; i++) {
      Color colour = Charts.colour(i);
      assertTrue(pixelsOf(image, colour, 0, 600) > 30, "series " + i + " drawn in the left panel");
      assertTrue(pixelsOf(image, colour, 600, 1200) > 30, "series " + i + " drawn in the right panel");
    }
    assertEquals(0, pixelsOf(image, Charts.colour(2), 0, 1200), "no third series, no third colour");
  }

  @Test
  void nanPointsAreLeftOutAndTheRestOfTheLineIsStillDrawn() {
    Series gappy = Series.of("service", CLIENTS, new double[] {100, Double.NaN, 300, 400, Double.NaN}, false);

    BufferedImage image = Charts.render(null, List.of(new Panel("t", "clients", "/s", true, false, List.of(gappy))), 600, 400);

    assertEquals(600, image.getWidth());
    assertEquals(400, image.getHeight());
    assertTrue(pixelsOf(image, Charts.colour(0), 0, 600) > 30);
  }

  @Test
  void onlyDrawablePointsReachTheChartAndAMissingYBreaksTheLine() {
    Series s = Series.of("s", new double[] {0, 1, 2, 4}, new double[] {5, 0, Double.POSITIVE_INFINITY, 8}, false);

    double[][] logBoth = Charts.drawable(s, true, true);
    assertEquals(List.of(1.0, 2.0, 4.0), List.of(logBoth[0][0], logBoth[0][1], logBoth[0][2]), "x = 0 left out on a log x axis");
    assertTrue(Double.isNaN(logBoth[1][0]) && Double.isNaN(logBoth[1][1]), "y = 0 and y = inf kept as gaps");
    assertEquals(8.0, logBoth[1][2]);
    assertNull(Charts.drawable(Series.of("zeros", CLIENTS, new double[5], false), false, true), "nothing left to draw");
  }

  @Test
  void anAllNanSeriesAnEmptyPanelAndNoPanelsStillMakeAnImage() throws Exception {
    Series allNan = Series.of("service", CLIENTS, new double[] {Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN}, false);
    Series zerosOnALogAxis = Series.of("errors", CLIENTS, new double[] {0, 0, 0, 0, 0}, false);
    Series onePoint = Series.of("single", new double[] {8}, new double[] {5}, true);
    Path png = dir.resolve("empty.png");

    assertDoesNotThrow(() -> Charts.write(png, "nothing measured", List.of(
        new Panel("all NaN", "clients", "/s", true, false, List.of(allNan)),
        new Panel("no series", "clients", "ms", false, true, List.of()),
        new Panel("zeros on log y", "clients", "errors", true, true, List.of(zerosOnALogAxis)),
        new Panel("one point", "x", "y", false, false, List.of(onePoint))), 1600, 400));
    assertEquals(1600, ImageIO.read(png.toFile()).getWidth());
    assertDoesNotThrow(() -> Charts.render("", List.of(), 300, 200));
  }

  @Test
  void theLegendGoesToTheCornerTheCurvesLeaveFree() {
    Series rising = Series.of("rising", CLIENTS, new double[] {1, 10, 100, 1000, 10000}, false);
    Series falling = Series.of("falling", CLIENTS, new double[] {10000, 1000, 100, 10, 1}, false);

    assertEquals(Styler.LegendPosition.InsideNW,
        Charts.legendCorner(new Panel("t", "x", "y", true, true, List.of(rising))));
    assertEquals(Styler.LegendPosition.InsideNE,
        Charts.legendCorner(new Panel("t", "x", "y", true, true, List.of(falling))));
  }

  @Test
  void aLogAxisCountsTheDecadesItsDataSpan() {
    Series p99 = Series.of("p99", CLIENTS, new double[] {90, 120, 300, 600, 950}, false);
    Panel panel = new Panel("t", "clients", "ms", true, true, List.of(p99));

    assertEquals(3, Charts.decades(panel, 0), "1, 10 and 100 clients");
    assertEquals(1, Charts.decades(panel, 1), "100 ms only: labelled at 1..9 of the decade");
  }

  @Test
  void tickNumbersReadAsPeopleWriteThem() {
    assertEquals("0", Charts.tickLabel(0));
    assertEquals("0.5", Charts.tickLabel(0.5));
    assertEquals("0.3", Charts.tickLabel(0.1 + 0.2));
    assertEquals("256", Charts.tickLabel(256));
    assertEquals("2500", Charts.tickLabel(2500));
    assertEquals("16k", Charts.tickLabel(16_000));
    assertEquals("1.5M", Charts.tickLabel(1_500_000));
  }

  private static long pixelsOf(BufferedImage image, Color colour, int fromX, int toX) {
    long n = 0;
    for (int x = fromX; x < toX; x++) {
      for (int y = 0; y < image.getHeight(); y++) {
        if ((image.getRGB(x, y) & 0xFFFFFF) == (colour.getRGB() & 0xFFFFFF)) n++;
      }
    }
    return n;
  }
}
