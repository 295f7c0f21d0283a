package io.flashsale.persistence;

import java.sql.PreparedStatement;
import java.sql.ResultSet;

/**
 * Who may act: a revoked principal gets 403 on every call, whatever its token says; a revocation
 * or a logout also refuses every token issued until then, and an unrevoke keeps that refusal, so
 * only a token issued after it works again. With a {@link PrincipalView}, the check is answered
 * from memory while the view is sure, and this process's changes are applied to the view at once.
 */
public final class Principals {
  /**
   * A principal's standing: whether it is revoked, and the instant (epoch milliseconds) at or
   * before which its tokens were issued are refused (0: none is).
   */
  public record Standing(boolean revoked, long tokensNotBeforeMillis) {
    public static final Standing CLEAR = new Standing(false, 0);

    /** A principal never logged out nor revoked (0) refuses no token, whatever its issued-at. */
    public boolean refusesTokenIssuedAt(long issuedAtMillis) {
      return tokensNotBeforeMillis > 0 && issuedAtMillis <= tokensNotBeforeMillis;
    }
  }

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

  public Standing standing(String tenant, String subject) {
    Standing known = view == null ? null : view.standing(tenant, subject);
    if (known != null) return known;
    return db.read(c -> {
      try (PreparedStatement ps = c.prepareStatement(
          "SELECT revoked, tokens_not_before_ms FROM principals WHERE tenant = ? AND subject = ?")) {
        ps.setString(1, tenant);
        ps.setString(2, subject);
        try (ResultSet rs = ps.executeQuery()) {
          return rs.next() ? new Standing(rs.getBoolean(1), rs.getLong(2)) : Standing.CLEAR;
        }
      }
    });
  }

  public boolean isRevoked(String tenant, String subject) {
    return standing(tenant, subject).revoked();
  }

  /** Every later call of the principal is refused, and every token issued until now for good. */
  public void revoke(String tenant, String subject) {
    note(tenant, subject, upsert(tenant, subject, true, 0));
  }

  /**
   * Logout: every token of the principal issued until now is refused (all its sessions end; a
   * token does not name a device). The principal may log in again at once.
   */
  public void endSessions(String tenant, String subject) {
    endSessions(tenant, subject, 0);
  }

  /**
   * Logout with the token that asked for it: at least that token ends, even when the instance
   * that issued it has a clock ahead of this one.
   */
  public void endSessions(String tenant, String subject, long presentedIssuedAtMillis) {
    note(tenant, subject, upsert(tenant, subject, false, presentedIssuedAtMillis));
  }

  /**
   * Restores a revoked principal; its tokens issued before the revocation stay refused. False when
   * the principal is unknown (nothing is stored then).
   */
  public boolean unrevoke(String tenant, String subject) {
    Standing restored = db.read(c -> {
      try (PreparedStatement ps = c.prepareStatement(
          "UPDATE principals SET revoked = false WHERE tenant = ? AND subject = ? RETURNING tokens_not_before_ms")) {
        ps.setString(1, tenant);
        ps.setString(2, subject);
        try (ResultSet rs = ps.executeQuery()) {
          return rs.next() ? new Standing(false, rs.getLong(1)) : null;
        }
      }
    });
    if (restored == null) return false;
    note(tenant, subject, restored);
    return true;
  }

  /** Refuses the tokens issued until now (never moving that instant back); revokes too when asked. */
  private Standing upsert(String tenant, String subject, boolean revoke, long atLeastMillis) {
    long now = Math.max(System.currentTimeMillis(), atLeastMillis);
    return db.read(c -> {
      try (PreparedStatement ps = c.prepareStatement(
          "INSERT INTO principals AS p (tenant, subject, revoked, tokens_not_before_ms) VALUES (?, ?, ?, ?)"
              + " ON CONFLICT (tenant, subject) DO UPDATE SET revoked = p.revoked OR EXCLUDED.revoked,"
              + " tokens_not_before_ms = greatest(p.tokens_not_before_ms, EXCLUDED.tokens_not_before_ms)"
              + " RETURNING revoked, tokens_not_before_ms")) {
        ps.setString(1, tenant);
        ps.setString(2, subject);
        ps.setBoolean(3, revoke);
        ps.setLong(4, now);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          return new Standing(rs.getBoolean(1), rs.getLong(2));
        }
      }
    });
  }

  private void note(String tenant, String subject, Standing standing) {
    if (view != null) view.noteStanding(tenant, subject, standing);
  }
}
