package io.flashsale.api.core;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.databind.SequenceWriter;
import com.fasterxml.jackson.dataformat.csv.CsvGenerator;
import com.fasterxml.jackson.dataformat.csv.CsvMapper;
import com.fasterxml.jackson.dataformat.csv.CsvSchema;
import io.flashsale.persistence.OrderQueries.OrderDetails;
import java.io.IOException;
import java.io.Writer;

/**
 * The order export's CSV: Jackson's CSV writer, every text field quoted (commas and quotes cannot
 * shift columns), numbers bare. Quoting does not stop a spreadsheet from reading a cell that starts
 * with =, +, -, @, a tab or a carriage return as a formula, so such a text value is written with a
 * leading apostrophe (the spreadsheet convention for "this is text"; OWASP's CSV injection advice).
 */
public final class OrderCsv implements AutoCloseable {
  public static final String HEADER = "order_id,status,version,sku,quantity,amount,request_key,created_at";

  @JsonPropertyOrder({"orderId", "status", "version", "sku", "quantity", "amount", "requestKey", "createdAt"})
  record Row(String orderId, String status, int version, String sku, int quantity, long amount, String requestKey,
      String createdAt) {}

  private static final CsvMapper MAPPER = CsvMapper.builder().enable(CsvGenerator.Feature.ALWAYS_QUOTE_STRINGS).build();
  private static final CsvSchema SCHEMA = MAPPER.schemaFor(Row.class).withoutHeader().withLineSeparator("\n");

  private final SequenceWriter rows;

  /** Writes the header line; rows follow with {@link #write}. */
  public OrderCsv(Writer out) throws IOException {
    out.write(HEADER + "\n");
    this.rows = MAPPER.writerFor(Row.class).with(SCHEMA).writeValues(out);
  }

  public void write(OrderDetails o) throws IOException {
    rows.write(new Row(text(o.orderId()), o.status().name(), o.version(), text(o.sku()), o.quantity(), o.amount(),
        text(o.requestKey()), text(o.createdAt())));
  }

  /** A text cell a spreadsheet shows as text: a leading formula character gets an apostrophe before it. */
  static String text(String value) {
    if (value == null || value.isEmpty()) return value;
    char first = value.charAt(0);
    return first == '=' || first == '+' || first == '-' || first == '@' || first == '\t' || first == '\r'
        ? "'" + value : value;
  }

  public void flush() throws IOException {
    rows.flush();
  }

  @Override
  public void close() throws IOException {
    rows.close();
  }
}
