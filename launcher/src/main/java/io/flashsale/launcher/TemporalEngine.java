package io.flashsale.launcher;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;

/** Which Temporal the service runs on (config {@code temporal.engine}, flag {@code --engine}). */
public enum TemporalEngine {
  /** The dev server when the temporal CLI is installed, else the in-memory engine. */
  AUTO,
  /** The Temporal CLI's dev server (real server, SQLite persistence, Web UI), a supervised child. */
  DEV_SERVER,
  /** Temporal's in-memory test server inside this JVM: no persistence, no visibility, no Web UI. */
  EMBEDDED,
  /** A cluster the service connects to (self-hosted or Temporal Cloud). */
  EXTERNAL;

  @JsonCreator
  public static TemporalEngine parse(String text) {
    return valueOf(text.trim().toUpperCase(Locale.ROOT).replace('-', '_'));
  }

  @JsonValue
  public String configName() {
    return name().toLowerCase(Locale.ROOT).replace('_', '-');
  }
}
