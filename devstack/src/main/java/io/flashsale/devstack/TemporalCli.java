package io.flashsale.devstack;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Finds the {@code temporal} CLI: a configured path, then PATH, then the project's own tools
 * folder ({@code .tools/bin}, filled by {@code ./flashsale install-temporal}), looked up from the
 * working directory and its parents so tests running inside a module find it too.
 */
public final class TemporalCli {
  /** The version the project pins; {@code ./flashsale install-temporal} builds exactly this one. */
  public static final String PINNED_VERSION = "v1.5.1";
  public static final String INSTALL_HINT =
      "./flashsale install-temporal (builds the pinned temporal CLI " + PINNED_VERSION + " into .tools/bin)";

  private TemporalCli() {}

  public static Optional<Path> find(String configured) {
    if (configured != null && !configured.isBlank()) {
      Path p = Path.of(configured).toAbsolutePath();
      return Files.isExecutable(p) ? Optional.of(p) : Optional.empty();
    }
    String home = System.getProperty("flashsale.home", "");
    if (!home.isBlank()) {
      Path p = Path.of(home, ".tools", "bin", "temporal");
      if (Files.isExecutable(p)) return Optional.of(p.toAbsolutePath());
    }
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      Path p = dir.resolve(".tools/bin/temporal");
      if (Files.isExecutable(p)) return Optional.of(p);
    }
    String path = System.getenv("PATH");
    if (path != null) {
      for (String dir : path.split(java.io.File.pathSeparator)) {
        if (dir.isBlank()) continue;
        Path p = Path.of(dir, "temporal");
        if (Files.isExecutable(p)) return Optional.of(p);
      }
    }
    return Optional.empty();
  }
}
