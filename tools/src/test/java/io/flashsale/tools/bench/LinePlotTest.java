package io.flashsale.tools.bench;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flashsale.tools.bench.LinePlot.Panel;
import io.flashsale.tools.bench.LinePlot.Series;
import java.awt.Color;
import java.awt.image.BufferedImage;
import java.nio.file.Path;
import java.util.List;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The PNG the benchmark curves are drawn in: its size, its lines, and what it does with missing data. */
class LinePlotTest {
  private static final double[] CLIENTS = {1, 4, 16, 64, 256};

  @TempDir Path dir;

  @Test
  void eachSeriesIsDrawnInItsOwnColourInAPngOfTheAskedSize() throws Exception {
    Series service = Series.of("service", CLIENTS, new double[] {180, 650, 1400, 1650, 1600}, false);
    Series ceiling = Series.of("JDBC ceiling", CLIENTS, new double[] {900, 3200, 6100, 6600, 6500}, true);
    Series serviceP99 = Series.of("service", CLIENTS, new double[] {9, 14, 31, 120, 480}, false);
    Series ceilingP99 = Series.of("JDBC ceiling", CLIENTS, new double[] {1.5, 2.2, 4.8, 18, 70}, true);
    Path png = dir.resolve("b1.png");

    LinePlot.write(png, "B1 admission storm", List.of(
        new Panel("throughput", "clients", "orders/s", true, false, List.of(service, ceiling)),
        new Panel("p99 latency", "clients", "ms", true, true, List.of(serviceP99, ceilingP99))), 1200, 480);

    BufferedImage image = ImageIO.read(png.toFile());
    assertEquals(1200, image.getWidth());
    assertEquals(480, image.getHeight());
    // One colour per series name, the same in both panels: each shows up in the left and the right half.
    for (int i = 0; i < 2; i++) {
      Color colour = LinePlot.colour(i);
      assertTrue(pixelsOf(image, colour, 0, 600) > 30, "series " + i + " drawn in the left panel");
      assertTrue(pixelsOf(image, colour, 600, 1200) > 30, "series " + i + " drawn in the right panel");
    }
    assertEquals(0, pixelsOf(image, LinePlot.colour(2), 0, 1200), "no third series, no third colour");
  }

  @Test
  void nanPointsAreSkippedAndTheRestOfTheLineIsStillDrawn() throws Exception {
    Series gappy = Series.of("service", CLIENTS, new double[] {100, Double.NaN, 300, 400, Double.NaN}, false);

    BufferedImage image = LinePlot.render(null, List.of(new Panel("t", "clients", "/s", true, false, List.of(gappy))), 600, 400);

    assertTrue(pixelsOf(image, LinePlot.colour(0), 0, 600) > 30);
  }

  @Test
  void anAllNanSeriesAnEmptyPanelAndNoPanelsDoNotThrow() {
    Series allNan = Series.of("service", CLIENTS, new double[] {Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN}, false);
    Series zerosOnALogAxis = Series.of("errors", CLIENTS, new double[] {0, 0, 0, 0, 0}, false);
    Series onePoint = Series.of("single", new double[] {8}, new double[] {5}, true);

    assertDoesNotThrow(() -> LinePlot.write(dir.resolve("empty.png"), "nothing measured", List.of(
        new Panel("all NaN", "clients", "/s", true, false, List.of(allNan)),
        new Panel("no series", "clients", "ms", false, true, List.of()),
        new Panel("zeros on log y", "clients", "errors", true, true, List.of(zerosOnALogAxis)),
        new Panel("one point", "x", "y", false, false, List.of(onePoint))), 1600, 400));
    assertDoesNotThrow(() -> LinePlot.render("", List.of(), 300, 200));
  }

  @Test
  void tickNumbersReadAsPeopleWriteThem() {
    assertEquals("0", LinePlot.tickLabel(0));
    assertEquals("0.5", LinePlot.tickLabel(0.5));
    assertEquals("0.3", LinePlot.tickLabel(0.1 + 0.2));
    assertEquals("256", LinePlot.tickLabel(256));
    assertEquals("2500", LinePlot.tickLabel(2500));
    assertEquals("16k", LinePlot.tickLabel(16_000));
    assertEquals("1.5M", LinePlot.tickLabel(1_500_000));
  }

  @Test
  void aLogXAxisOfClientsIsTickedAtPowersOfTwoAndALogYAxisAtOneTwoFive() {
    assertEquals(List.of(1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0),
        LinePlot.Axis.of(CLIENTS, true, false).ticks());
    assertEquals(List.of(1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0),
        LinePlot.Axis.of(new double[] {1.2, 90}, true, true).ticks());
    assertEquals(0.0, LinePlot.Axis.of(new double[] {300, 900}, false, true).lo(), "linear y starts at zero");
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
