package io.flashsale.channel;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ledger's durable store: an append-only file of JSON lines, one line per ledger mutation, in ledger order.
 * This class owns the file format; {@link Ledger} decides what is recorded and how a record changes its state.
 *
 * <pre>
 * {"op":"charge","mo":"mo-1","amount":1000,"notify_url":"http://…","result":"CHARGED","txn":"txn-000001","notify_id":"ntf-000001","row_seq":1,"at":"2025-…Z"}
 * {"op":"charge","mo":"mo-2","amount":500,"notify_url":"http://…","result":"DECLINED","txn":"txn-000002","notify_id":"ntf-000002"}
 * {"op":"close","mo":"mo-3"}
 * {"op":"refund","mo":"mo-1","amount":1000,"txn":"txn-000001","refund_key":"rk-1","refund_id":"rfd-000001","notify_id":"ntf-000003","row_seq":2,"at":"2025-…Z"}
 * {"op":"reset"}
 * </pre>
 *
 * A record counts only once its whole line, newline included, is in the file. {@link #append} writes the line and
 * forces it to disk before returning, so whatever the stub answered is in the file. A crash in the middle of a
 * write leaves a torn last line: {@link #open} logs a warning, drops it and cuts it off the file so that the next
 * record starts on a line of its own. An unreadable line anywhere else means the file is damaged; opening fails.
 *
 * <p>The file is locked while open, so two stubs cannot write the same ledger. Not thread-safe: the ledger calls
 * it under its own lock.
 */
final class LedgerJournal implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(LedgerJournal.class);

  /** One mutation of the ledger. */
  sealed interface Entry permits Charge, Close, Refund, Reset {}

  /** A charge that took effect; {@code row} is its statement row, null for a declined charge. */
  record Charge(String merchantOrder, BigDecimal amount, String notifyUrl, String result, String txn,
      String notifyId, LedgerRow row) implements Entry {}

  /** An order closed before anybody charged it. */
  record Close(String merchantOrder) implements Entry {}

  /** A refund that took effect; the row holds order, amount, txn and refund key. */
  record Refund(LedgerRow row, String refundId, String notifyId) implements Entry {}

  /** /_reset: the ledger forgets its orders, refunds and rows (ids keep counting). */
  record Reset() implements Entry {}

  private final Path file;
  private final FileChannel channel;
  private final FileLock lock;
  /** Set when a failed append could not be undone: the file may end in a partial line, so no more appends. */
  private IOException broken;

  private LedgerJournal(Path file, FileChannel channel, FileLock lock) {
    this.file = file;
    this.channel = channel;
    this.lock = lock;
  }

  /**
   * Opens (creating if needed) and locks the file, hands every record in it to {@code replay} in file order, and
   * leaves the journal ready to append. An exception thrown by {@code replay} fails the open, reported with the
   * line number; so does a file that another stub holds.
   */
  static LedgerJournal open(Path file, Consumer<Entry> replay) {
    Path dir = file.toAbsolutePath().getParent();
    boolean created = !Files.exists(file);
    FileChannel channel;
    try {
      if (dir != null) {
        Files.createDirectories(dir);
      }
      channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
          StandardOpenOption.WRITE);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot open ledger file " + file, e);
    }
    try {
      FileLock lock;
      try {
        lock = channel.tryLock();
      } catch (OverlappingFileLockException e) {
        lock = null;
      }
      if (lock == null) {
        throw new IllegalStateException("ledger file " + file + " is in use by another channel stub");
      }
      LedgerJournal journal = new LedgerJournal(file, channel, lock);
      long end = journal.replay(replay);
      channel.position(end);
      if (created && dir != null) {
        syncDirectory(dir);
      }
      return journal;
    } catch (IOException e) {
      closeQuietly(channel);
      throw new UncheckedIOException("cannot read ledger file " + file, e);
    } catch (RuntimeException e) {
      closeQuietly(channel);
      throw e;
    }
  }

  /** Appends one record and forces it to disk. On failure the file is left as before and the call throws. */
  void append(Entry entry) {
    if (broken != null) {
      throw new UncheckedIOException("ledger file " + file + " is unusable after a failed write", broken);
    }
    if (!channel.isOpen()) {
      throw new IllegalStateException("ledger file " + file + " is closed");
    }
    ByteBuffer line = ByteBuffer.wrap(encode(entry));
    long before;
    try {
      before = channel.position();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot append to ledger file " + file, e);
    }
    try {
      while (line.hasRemaining()) {
        channel.write(line);
      }
      channel.force(true);
    } catch (IOException e) {
      try {
        channel.truncate(before);
        channel.position(before);
        channel.force(true);
      } catch (IOException undo) {
        e.addSuppressed(undo);
        broken = e;
      }
      throw new UncheckedIOException("cannot append to ledger file " + file, e);
    }
  }

  @Override
  public void close() {
    try {
      if (lock.isValid()) {
        lock.release();
      }
    } catch (IOException e) {
      log.warn("cannot unlock ledger file {}: {}", file, e.toString());
    }
    closeQuietly(channel);
  }

  // ---- reading ----

  /** Replays every complete record; cuts off a torn last line. Returns the length of the good part. */
  private long replay(Consumer<Entry> replay) throws IOException {
    long size = channel.size();
    if (size > Integer.MAX_VALUE - 8) {
      throw new IOException("ledger file " + file + " is too large (" + size + " bytes)");
    }
    ByteBuffer buf = ByteBuffer.allocate((int) size);
    while (buf.hasRemaining() && channel.read(buf, buf.position()) >= 0) {
      // read until full
    }
    byte[] bytes = buf.array();
    int records = 0;
    int lineNo = 0;
    int start = 0;
    while (start < bytes.length) {
      lineNo++;
      int nl = indexOf(bytes, (byte) '\n', start);
      boolean complete = nl >= 0;
      int end = complete ? nl : bytes.length;
      String text = new String(bytes, start, end - start, StandardCharsets.UTF_8);
      boolean last = !complete || isBlank(bytes, nl + 1);
      if (!text.isBlank()) {
        JsonNode node = complete ? parse(text) : null;
        if (node == null) {
          if (!last) {
            throw new IllegalStateException("ledger file " + file + " line " + lineNo + " is damaged: " + clip(text));
          }
          log.warn("ledger file {}: ignoring torn last line {} ({} bytes): {}", file, lineNo, bytes.length - start,
              clip(text));
          truncate(start);
          return start;
        }
        try {
          replay.accept(decode(node));
        } catch (RuntimeException e) {
          throw new IllegalStateException("ledger file " + file + " line " + lineNo + ": " + e.getMessage(), e);
        }
        records++;
      }
      start = end + 1;
    }
    log.info("ledger file {}: {} records replayed", file, records);
    return size;
  }

  private void truncate(long length) throws IOException {
    channel.truncate(length);
    channel.force(true);
  }

  private static JsonNode parse(String line) {
    try {
      JsonNode node = Json.MAPPER.readTree(line);
      return node != null && node.isObject() ? node : null;
    } catch (JsonProcessingException e) {
      return null;
    }
  }

  private static Entry decode(JsonNode n) {
    String op = text(n, "op");
    switch (op) {
      case "charge": {
        String mo = text(n, "mo");
        BigDecimal amount = amount(n);
        String txn = text(n, "txn");
        LedgerRow row = n.has("row_seq") ? new LedgerRow(n.get("row_seq").asLong(), "CHARGE", mo, amount, txn, null,
            instant(n)) : null;
        return new Charge(mo, amount, text(n, "notify_url"), text(n, "result"), txn, optionalText(n, "notify_id"), row);
      }
      case "close":
        return new Close(text(n, "mo"));
      case "refund": {
        LedgerRow row = new LedgerRow(n.path("row_seq").asLong(), "REFUND", text(n, "mo"), amount(n), text(n, "txn"),
            text(n, "refund_key"), instant(n));
        return new Refund(row, text(n, "refund_id"), optionalText(n, "notify_id"));
      }
      case "reset":
        return new Reset();
      default:
        throw new IllegalStateException("unknown op " + op);
    }
  }

  private static String text(JsonNode n, String field) {
    String s = optionalText(n, field);
    if (s == null) {
      throw new IllegalStateException("record lacks " + field);
    }
    return s;
  }

  private static String optionalText(JsonNode n, String field) {
    JsonNode v = n.get(field);
    return v == null || !v.isTextual() ? null : v.asText();
  }

  private static BigDecimal amount(JsonNode n) {
    JsonNode v = n.get("amount");
    if (v == null || !v.isNumber()) {
      throw new IllegalStateException("record lacks amount");
    }
    return v.decimalValue();
  }

  private static Instant instant(JsonNode n) {
    try {
      return Instant.parse(text(n, "at"));
    } catch (DateTimeParseException e) {
      throw new IllegalStateException("bad at: " + n.get("at"));
    }
  }

  // ---- writing ----

  private static byte[] encode(Entry entry) {
    ObjectNode n = Json.MAPPER.createObjectNode();
    if (entry instanceof Charge c) {
      n.put("op", "charge").put("mo", c.merchantOrder()).put("amount", c.amount())
          .put("notify_url", c.notifyUrl()).put("result", c.result()).put("txn", c.txn())
          .put("notify_id", c.notifyId());
      if (c.row() != null) {
        n.put("row_seq", c.row().seq()).put("at", c.row().at().toString());
      }
    } else if (entry instanceof Close c) {
      n.put("op", "close").put("mo", c.merchantOrder());
    } else if (entry instanceof Refund r) {
      LedgerRow row = r.row();
      n.put("op", "refund").put("mo", row.merchantOrder()).put("amount", row.amount()).put("txn", row.txn())
          .put("refund_key", row.refundKey()).put("refund_id", r.refundId()).put("notify_id", r.notifyId())
          .put("row_seq", row.seq()).put("at", row.at().toString());
    } else if (entry instanceof Reset) {
      n.put("op", "reset");
    } else {
      throw new IllegalArgumentException("unknown entry " + entry);
    }
    // Jackson escapes control characters, so the line holds no raw newline.
    byte[] json = Json.write(n);
    byte[] line = new byte[json.length + 1];
    System.arraycopy(json, 0, line, 0, json.length);
    line[json.length] = '\n';
    return line;
  }

  // ---- helpers ----

  private static int indexOf(byte[] bytes, byte b, int from) {
    for (int i = from; i < bytes.length; i++) {
      if (bytes[i] == b) {
        return i;
      }
    }
    return -1;
  }

  /** True if nothing but whitespace (or NUL padding a crash may leave) follows {@code from}. */
  private static boolean isBlank(byte[] bytes, int from) {
    for (int i = from; i < bytes.length; i++) {
      byte b = bytes[i];
      if (b != ' ' && b != '\n' && b != '\r' && b != '\t' && b != 0) {
        return false;
      }
    }
    return true;
  }

  private static String clip(String s) {
    return s.length() <= 80 ? s : s.substring(0, 80) + "…";
  }

  /** Makes a newly created file's directory entry durable (best effort; not every platform can open a directory). */
  private static void syncDirectory(Path dir) {
    try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
      d.force(true);
    } catch (IOException | UnsupportedOperationException e) {
      log.debug("cannot sync directory {}: {}", dir, e.toString());
    }
  }

  private static void closeQuietly(FileChannel channel) {
    try {
      channel.close();
    } catch (IOException ignored) {
      // nothing left to do
    }
  }
}
