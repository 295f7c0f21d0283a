package io.flashsale.domain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The flags each status declares are the ones docs/DESIGN.md §State machine gives it: its list of
 * statuses, its sentences on {@code isTerminal()} and {@code isPending()}, and its state diagram.
 * A status added to the enum but not to the document (or the other way round) fails here.
 */
class OrderStatusTest {
  private static final String SECTION = stateMachineSection();
  private static final Pattern EDGE = Pattern.compile("^\\s*(\\[\\*]|[A-Z_]+) --> (\\[\\*]|[A-Z_]+)(?::(.*))?$");
  private static final String END = "[*]";

  /** One arrow of the diagram: {@code [*]} is the start or the end. */
  private record Edge(String from, String to, String label) {}

  @Test
  void theDocumentListsEveryStatusAndItsDiagramHasEachOne() {
    assertEquals(all(), names(after("Statuses (`OrderStatus`): ")), "§State machine's list of statuses");
    Set<String> drawn = new TreeSet<>();
    for (Edge e : edges()) {
      drawn.add(e.from());
      drawn.add(e.to());
    }
    drawn.remove(END);
    assertEquals(all(), drawn, "the statuses of §State machine's diagram");
  }

  @Test
  void terminalIsWhatTheDocumentSaysAndWhatTheDiagramEnds() {
    assertEquals(names(after("`isTerminal()` is true for ")), with(OrderStatus::isTerminal));
    Set<String> ending = edges().stream().filter(e -> e.to().equals(END)).map(Edge::from)
        .collect(Collectors.toCollection(TreeSet::new));
    assertEquals(ending, with(OrderStatus::isTerminal), "terminal: an outbox event and the diagram's [*]");
  }

  @Test
  void pendingIsWhatTheDocumentSaysAndNeverTerminal() {
    assertEquals(names(after("`isPending()` is true for ")), with(OrderStatus::isPending));
    for (OrderStatus s : OrderStatus.values()) {
      assertFalse(s.isPending() && s.isTerminal(), s + " is pending and terminal");
    }
  }

  @Test
  void settledForAChargeIsWhereASuccessLeadsNowhereAndNoMoveLeaves() {
    Set<String> settled = with(OrderStatus::isSettledForACharge);
    Set<String> movedByACharge = edges().stream().filter(e -> e.label() != null && e.label().contains("CHARGED"))
        .map(Edge::from).collect(Collectors.toCollection(TreeSet::new));
    Set<String> expected = new TreeSet<>(all());
    expected.removeAll(movedByACharge);
    assertEquals(expected, settled, "settled for a charge: the statuses no CHARGED arrow of the diagram leaves");
    for (Edge e : edges()) {
      if (settled.contains(e.from()) && !e.to().equals(END)) {
        assertTrue(settled.contains(e.to()), e.from() + " --> " + e.to() + " leaves the settled statuses");
      }
    }
    for (OrderStatus s : OrderStatus.values()) {
      assertTrue(!s.isSettledForACharge() || s.isTerminal() || s.isPending(), s + " is settled but neither terminal nor pending");
    }
  }

  // --- the document

  private static String stateMachineSection() {
    try {
      String doc = Files.readString(Path.of("../docs/DESIGN.md"));
      int start = doc.indexOf("\n## State machine\n");
      assertTrue(start >= 0, "docs/DESIGN.md has no §State machine");
      int end = doc.indexOf("\n## ", start + 1);
      return doc.substring(start, end < 0 ? doc.length() : end);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The rest of the section's line that starts with {@code prefix} (after a list marker), up to its end or first period. */
  private static String after(String prefix) {
    for (String line : SECTION.split("\n")) {
      String l = line.strip().replaceFirst("^- ", "");
      if (l.startsWith(prefix)) {
        String rest = l.substring(prefix.length());
        int dot = rest.indexOf('.');
        return dot < 0 ? rest : rest.substring(0, dot);
      }
    }
    throw new AssertionError("§State machine has no line starting " + prefix);
  }

  /** "PAID, FAILED, CANCELLED and REFUNDED" as a set of names. */
  private static Set<String> names(String list) {
    return Arrays.stream(list.split(",|\\band\\b")).map(String::strip).filter(s -> !s.isEmpty())
        .collect(Collectors.toCollection(TreeSet::new));
  }

  private static List<Edge> edges() {
    int open = SECTION.indexOf("```mermaid");
    assertTrue(open >= 0, "§State machine has no diagram");
    int close = SECTION.indexOf("```", open + 3);
    List<Edge> edges = new ArrayList<>();
    for (String line : SECTION.substring(open, close).split("\n")) {
      Matcher m = EDGE.matcher(line);
      if (m.matches()) edges.add(new Edge(m.group(1), m.group(2), m.group(3)));
    }
    assertTrue(edges.size() > 10, "the diagram's arrows: " + edges);
    return edges;
  }

  // --- the enum

  private static Set<String> all() {
    return with(s -> true);
  }

  private static Set<String> with(Predicate<OrderStatus> flag) {
    return Arrays.stream(OrderStatus.values()).filter(flag).map(Enum::name).collect(Collectors.toCollection(TreeSet::new));
  }
}
