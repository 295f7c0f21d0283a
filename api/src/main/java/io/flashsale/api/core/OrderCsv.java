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
 * The order export's CSV: Jackson's CSV writer, every text field quoted (a value that starts with
 * =, + or - stays text in a spreadsheet, commas and quotes cannot shift columns), numbers bare.
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
    rows.write(new Row(o.orderId(), o.status().name(), o.version(), o.sku(), o.quantity(), o.amount(), o.requestKey(),
        o.createdAt()));
  }

  public void flush() throws IOException {
    rows.flush();
  }

  @Override
  public void close() throws IOException {
    rows.close();
  }
}
