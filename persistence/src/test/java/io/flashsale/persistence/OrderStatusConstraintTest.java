package io.flashsale.persistence;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flashsale.domain.OrderStatus;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The database allows exactly the statuses of {@link OrderStatus}: every CHECK constraint on a
 * column that holds one, read back from a PostgreSQL migrated as production migrates it, lists the
 * enum's values and no others. A status added to the enum without a migration fails here, not at
 * its first write (SQLState 23514).
 */
class OrderStatusConstraintTest {
  @RegisterExtension static final MigratedPostgres pg = new MigratedPostgres();

  /** The columns that hold an order status. order_transition's have no CHECK today; one added later is compared too. */
  private static final Set<String> STATUS_COLUMNS =
      Set.of("orders.status", "order_transition.from_status", "order_transition.to_status", "pay_answer.status");
  /** The columns that must have such a CHECK. */
  private static final Set<String> CHECKED = Set.of("orders.status", "pay_answer.status");
  private static final Pattern LITERAL = Pattern.compile("'([^']*)'");

  @Test
  void everyCheckOnAnOrderStatusAllowsExactlyTheEnum() {
    Map<String, String> checks = statusChecks();
    for (String column : CHECKED) {
      assertTrue(checks.keySet().stream().anyMatch(k -> k.startsWith(column + " ")), column + " has no CHECK: " + checks);
    }
    Set<String> statuses = Arrays.stream(OrderStatus.values()).map(Enum::name).collect(Collectors.toCollection(TreeSet::new));
    checks.forEach((where, definition) ->
        assertEquals(statuses, literals(definition), where + ": " + definition + " against OrderStatus.values()"));
  }

  /**
   * Column and constraint name (the table's, for one on no known column) to definition, for every CHECK on a
   * status column and every other one that names PAYING, a value only an order status has.
   */
  private static Map<String, String> statusChecks() {
    return pg.db().read(c -> {
      Map<String, String> out = new TreeMap<>();
      try (PreparedStatement ps = c.prepareStatement(
          "SELECT cl.relname, con.conname, pg_get_constraintdef(con.oid),"
              + " (SELECT string_agg(a.attname, ',') FROM pg_attribute a"
              + "   WHERE a.attrelid = con.conrelid AND a.attnum = ANY (con.conkey))"
              + " FROM pg_constraint con JOIN pg_class cl ON cl.oid = con.conrelid"
              + " JOIN pg_namespace n ON n.oid = cl.relnamespace"
              + " WHERE con.contype = 'c' AND n.nspname = current_schema()");
          ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          String table = rs.getString(1);
          String definition = rs.getString(3);
          String columns = rs.getString(4) == null ? "" : rs.getString(4);
          boolean onStatus = Arrays.stream(columns.split(",")).anyMatch(col -> STATUS_COLUMNS.contains(table + "." + col));
          if (onStatus) {
            out.put(table + "." + columns + " " + rs.getString(2), definition);
          } else if (literals(definition).contains(OrderStatus.PAYING.name())) {
            out.put(table + " " + rs.getString(2), definition);
          }
        }
      }
      return out;
    });
  }

  private static Set<String> literals(String definition) {
    Set<String> values = new TreeSet<>();
    Matcher m = LITERAL.matcher(definition);
    while (m.find()) values.add(m.group(1));
    return values;
  }
}
