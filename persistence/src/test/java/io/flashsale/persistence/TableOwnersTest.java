package io.flashsale.persistence;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Each table has one owner (docs/DESIGN.md §Data model, table owners): all SQL of the order
 * database lives in this module, and every table is written by exactly one class.
 */
class TableOwnersTest {
  private static final Path ROOT = Path.of("..");
  private static final Pattern JDBC = Pattern.compile("\\b(prepareStatement|createStatement|prepareCall)\\s*\\(");
  private static final Pattern CREATE_TABLE = Pattern.compile("CREATE TABLE (?:IF NOT EXISTS )?(\\w+)");

  /**
   * Modules that run SQL of their own, and why: the fulfillment consumer is another service with
   * its own schema and migrations; the tools measure the JDBC ceiling and check the invariants
   * after a benchmark, outside the service.
   */
  private static final Set<String> OWN_SQL = Set.of("persistence", "fulfillment-consumer", "tools", "evidence");

  /**
   * Single files elsewhere that run SQL, never on the order database's tables: the local cluster
   * creates the Temporal server's role and databases on the Temporal server's own PostgreSQL; the
   * embedded PostgreSQL's start asks the server on its port which data directory it serves.
   */
  private static final Set<String> OTHER_DATABASES = Set.of("devstack/src/main/java/io/flashsale/devstack/cluster/Cluster.java",
      "devstack/src/main/java/io/flashsale/devstack/SupervisedPostgres.java");

  /** Table → the one class that writes it. */
  private static final Map<String, String> OWNERS = new TreeMap<>(Map.of(
      "sku", "Inventory",
      "reservation", "Inventory",
      "orders", "OrderTransitions",
      "order_transition", "OrderTransitions",
      "outbox", "Outbox",
      "payment_notification", "Notifications",
      "principals", "Principals",
      "pay_answer", "PayAnswers"));

  @Test
  void noProductionModuleButPersistenceRunsSqlOnTheOrderDatabase() throws IOException {
    List<String> outside = new ArrayList<>();
    try (Stream<Path> modules = Files.list(ROOT)) {
      for (Path module : modules.filter(m -> Files.isDirectory(m.resolve("src/main/java"))).toList()) {
        if (OWN_SQL.contains(module.getFileName().toString())) continue;
        for (Path java : javaFiles(module.resolve("src/main/java"))) {
          String file = ROOT.relativize(java).toString();
          if (JDBC.matcher(Files.readString(java)).find() && !OTHER_DATABASES.contains(file)) outside.add(file);
        }
      }
    }
    assertTrue(outside.isEmpty(), "SQL outside persistence: " + outside);
  }

  @Test
  void everyTableIsWrittenByItsOneOwner() throws IOException {
    Set<String> tables = new TreeSet<>();
    for (Path sql : files(Path.of("src/main/resources/db/migration"), ".sql")) {
      Matcher m = CREATE_TABLE.matcher(Files.readString(sql));
      while (m.find()) tables.add(m.group(1));
    }
    assertTrue(tables.containsAll(OWNERS.keySet()), "tables in the migrations: " + tables);
    Map<String, Set<String>> writers = new TreeMap<>();
    for (Path java : javaFiles(Path.of("src/main/java"))) {
      String source = Files.readString(java);
      String owner = java.getFileName().toString().replace(".java", "");
      for (String table : tables) {
        if (Pattern.compile("(INSERT INTO|UPDATE|DELETE FROM)\\s+" + table + "\\b").matcher(source).find()) {
          writers.computeIfAbsent(table, t -> new TreeSet<>()).add(owner);
        }
      }
    }
    Map<String, Set<String>> expected = new TreeMap<>();
    OWNERS.forEach((table, owner) -> expected.put(table, Set.of(owner)));
    assertEquals(expected, writers, "the classes writing each table");
  }

  private static List<Path> javaFiles(Path dir) {
    return files(dir, ".java");
  }

  private static List<Path> files(Path dir, String suffix) {
    try (Stream<Path> walk = Files.walk(dir)) {
      return walk.filter(p -> p.toString().endsWith(suffix)).sorted().toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
