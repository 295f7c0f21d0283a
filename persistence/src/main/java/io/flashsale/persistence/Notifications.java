package io.flashsale.persistence;

import java.sql.PreparedStatement;
import java.sql.ResultSet;

/** Arrivals of payment callbacks: recorded before the workflow is signalled, effect filled later. */
public final class Notifications {
  private final Database db;

  public Notifications(Database db) {
    this.db = db;
  }

  public long recordArrival(String notifyId, String merchantOrder, String kind, long amount, String txn) {
    return db.read(c -> {
      try (PreparedStatement ps = c.prepareStatement(
          "INSERT INTO payment_notification (notify_id, merchant_order, kind, amount, txn) VALUES (?, ?, ?, ?, ?)"
              + " RETURNING id")) {
        ps.setString(1, notifyId);
        ps.setString(2, merchantOrder);
        ps.setString(3, kind);
        ps.setLong(4, amount);
        ps.setString(5, txn);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          return rs.getLong(1);
        }
      }
    });
  }

  /** For arrivals that never reach a workflow (unknown order, signal refused). */
  public void markEffect(long id, String effect) {
    db.read(c -> {
      try (PreparedStatement ps = c.prepareStatement(
          "UPDATE payment_notification SET effect = ?, applied_at = now() WHERE id = ? AND effect IS NULL")) {
        ps.setString(1, effect);
        ps.setLong(2, id);
        return ps.executeUpdate();
      }
    });
  }
}
