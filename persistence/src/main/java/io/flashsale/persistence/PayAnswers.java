package io.flashsale.persistence;

import io.flashsale.domain.CommandOutcome;
import io.flashsale.domain.OrderStatus;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Instant;

/**
 * The first answer to each keyed pay, table {@code pay_answer} (migration V7), keyed by (order id,
 * Idempotency-Key). The engine answers a retried key only while the update id is in the order's
 * current run; once the key reaches a newer run or none, the API answers from here (docs/DESIGN.md
 * §Idempotency-Key lifetimes). The first answer written wins; rows live as long as their order.
 */
public final class PayAnswers {
  /** An answer as the API gave it: its HTTP status and the fields of its body. */
  public record Answer(int httpStatus, CommandOutcome outcome, OrderStatus status, int version, Instant answeredAt) {
    public Answer(int httpStatus, CommandOutcome outcome, OrderStatus status, int version) {
      this(httpStatus, outcome, status, version, null);
    }
  }

  private final Database db;

  public PayAnswers(Database db) {
    this.db = db;
  }

  /**
   * Records the first answer to this key of this order; true if it was the first, false if one was
   * already recorded (which is kept: INSERT ... ON CONFLICT DO NOTHING).
   */
  public boolean remember(String orderId, String idempotencyKey, Answer answer) {
    return db.read(c -> {
      try (PreparedStatement ps = c.prepareStatement(
          "INSERT INTO pay_answer (order_id, idempotency_key, http_status, outcome, status, version)"
              + " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (order_id, idempotency_key) DO NOTHING")) {
        ps.setString(1, orderId);
        ps.setString(2, idempotencyKey);
        ps.setInt(3, answer.httpStatus());
        if (answer.outcome() == null) ps.setNull(4, Types.VARCHAR); else ps.setString(4, answer.outcome().name());
        if (answer.status() == null) ps.setNull(5, Types.VARCHAR); else ps.setString(5, answer.status().name());
        ps.setInt(6, answer.version());
        return ps.executeUpdate() == 1;
      }
    });
  }

  /** The answer recorded for this key of this order, or null when it has none. */
  public Answer recorded(String orderId, String idempotencyKey) {
    return db.read(c -> {
      try (PreparedStatement ps = c.prepareStatement(
          "SELECT http_status, outcome, status, version, answered_at FROM pay_answer"
              + " WHERE order_id = ? AND idempotency_key = ?")) {
        ps.setString(1, orderId);
        ps.setString(2, idempotencyKey);
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next()) return null;
          String outcome = rs.getString(2);
          String status = rs.getString(3);
          Timestamp at = rs.getTimestamp(5);
          return new Answer(rs.getInt(1), outcome == null ? null : CommandOutcome.valueOf(outcome),
              status == null ? null : OrderStatus.valueOf(status), rs.getInt(4), at.toInstant());
        }
      }
    });
  }
}
