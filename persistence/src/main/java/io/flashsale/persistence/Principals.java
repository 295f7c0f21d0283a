package io.flashsale.persistence;

import java.sql.PreparedStatement;
import java.sql.ResultSet;

/**
 * Who may act: a revoked principal gets 403 on every call, whatever its token says. With a
 * {@link PrincipalView}, the revocation check is answered from memory while the view is sure, and
 * this process's revocations are applied to the view at once.
 */
public final class Principals {
  private final Database db;
  /** Null: every check reads the database. */
  private final PrincipalView view;

  public Principals(Database db) {
    this(db, null);
  }

  public Principals(Database db, PrincipalView view) {
    this.db = db;
    this.view = view;
  }

  public void register(String tenant, String subject) {
    db.read(c -> {
      try (PreparedStatement ps = c.prepareStatement(
          "INSERT INTO principals (tenant, subject) VALUES (?, ?) ON CONFLICT DO NOTHING")) {
        ps.setString(1, tenant);
        ps.setString(2, subject);
        return ps.executeUpdate();
      }
    });
  }

  public boolean isRevoked(String tenant, String subject) {
    Boolean known = view == null ? null : view.revoked(tenant, subject);
    if (known != null) return known;
    return db.read(c -> {
      try (PreparedStatement ps = c.prepareStatement("SELECT revoked FROM principals WHERE tenant = ? AND subject = ?")) {
        ps.setString(1, tenant);
        ps.setString(2, subject);
        try (ResultSet rs = ps.executeQuery()) {
          return rs.next() && rs.getBoolean(1);
        }
      }
    });
  }

  public void revoke(String tenant, String subject) {
    db.read(c -> {
      try (PreparedStatement ps = c.prepareStatement(
          "INSERT INTO principals (tenant, subject, revoked) VALUES (?, ?, true)"
              + " ON CONFLICT (tenant, subject) DO UPDATE SET revoked = true")) {
        ps.setString(1, tenant);
        ps.setString(2, subject);
        return ps.executeUpdate();
      }
    });
    if (view != null) view.noteRevoked(tenant, subject, true);
  }

  /** Restores a revoked principal; false when the principal is unknown (nothing is stored then). */
  public boolean unrevoke(String tenant, String subject) {
    boolean restored = db.read(c -> {
      try (PreparedStatement ps = c.prepareStatement(
          "UPDATE principals SET revoked = false WHERE tenant = ? AND subject = ?")) {
        ps.setString(1, tenant);
        ps.setString(2, subject);
        return ps.executeUpdate() == 1;
      }
    });
    if (restored && view != null) view.noteRevoked(tenant, subject, false);
    return restored;
  }
}
