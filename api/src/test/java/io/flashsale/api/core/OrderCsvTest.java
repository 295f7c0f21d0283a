package io.flashsale.api.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.flashsale.domain.OrderStatus;
import io.flashsale.persistence.OrderQueries.OrderDetails;
import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.Test;

class OrderCsvTest {
  private static OrderDetails order(String id, String requestKey) {
    return new OrderDetails(id, "t1", "u1", requestKey, OrderStatus.PAID, 3, "sku-lab-01", 1, 1990, null, id + "/r1",
        "CONFIRMED", "wf", "2026-11-30T10:00:00Z", List.of());
  }

  @Test
  void everyTextFieldIsQuotedAndNumbersAreBare() throws Exception {
    StringWriter out = new StringWriter();
    try (OrderCsv csv = new OrderCsv(out)) {
      csv.write(order("ord-0001", "k1"));
      csv.write(order("ord-0002", "=SUM(A1),\"x\""));
    }
    assertEquals(OrderCsv.HEADER + "\n"
        + "\"ord-0001\",\"PAID\",3,\"sku-lab-01\",1,1990,\"k1\",\"2026-11-30T10:00:00Z\"\n"
        + "\"ord-0002\",\"PAID\",3,\"sku-lab-01\",1,1990,\"'=SUM(A1),\"\"x\"\"\",\"2026-11-30T10:00:00Z\"\n",
        out.toString());
  }

  /** A quoted cell is still read as a formula by a spreadsheet: one that starts like one is made text. */
  @Test
  void aTextValueThatStartsLikeAFormulaIsWrittenAsText() {
    for (String formula : new String[] {"=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx"}) {
      assertEquals("'" + formula, OrderCsv.text(formula));
    }
    assertEquals("k-1", OrderCsv.text("k-1"), "only the first character counts");
    assertEquals("", OrderCsv.text(""));
  }
}
