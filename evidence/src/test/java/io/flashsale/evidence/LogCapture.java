package io.flashsale.evidence;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.PatternLayout;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;

/**
 * Every log event of this JVM while open, formatted as it happens (on the logging thread, with its
 * MDC as it is then) with the service's own console pattern: what an operator reads in its log.
 */
final class LogCapture extends AppenderBase<ILoggingEvent> implements AutoCloseable {
  private final List<String> lines = new ArrayList<>();
  private final PatternLayout layout = new PatternLayout();
  private final Logger root;

  private LogCapture(String pattern, String name) {
    LoggerContext context = (LoggerContext) org.slf4j.LoggerFactory.getILoggerFactory();
    root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    layout.setContext(context);
    layout.setPattern(pattern);
    layout.start();
    setContext(context);
    setName(name);
  }

  static LogCapture start(String pattern, String name) {
    LogCapture c = new LogCapture(pattern, name);
    c.start();
    c.root.addAppender(c);
    return c;
  }

  /** The console log format of the service's local configuration (embedded.yml). */
  static String configuredLogFormat() throws Exception {
    try (InputStream in = LogCapture.class.getClassLoader().getResourceAsStream("embedded.yml")) {
      return new ObjectMapper(new YAMLFactory()).readTree(in).at("/logging/appenders/0/logFormat").asText();
    }
  }

  @Override
  protected synchronized void append(ILoggingEvent event) {
    lines.add(layout.doLayout(event).strip());
  }

  synchronized List<String> lines() {
    return List.copyOf(lines);
  }

  @Override
  public void close() {
    root.detachAppender(this);
    stop();
  }
}
