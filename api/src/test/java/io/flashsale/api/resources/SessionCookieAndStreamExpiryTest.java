package io.flashsale.api.resources;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flashsale.api.auth.Caller;
import jakarta.ws.rs.core.NewCookie;
import org.junit.jupiter.api.Test;

class SessionCookieAndStreamExpiryTest {
  @Test
  void theSessionCookieIsSecureOverTls() {
    NewCookie tls = SessionResource.cookie("tok", 3600, true);
    assertTrue(tls.isSecure());
    assertTrue(tls.isHttpOnly());
    assertEquals(NewCookie.SameSite.STRICT, tls.getSameSite());
    assertTrue(tls.toString().contains("Secure"), tls.toString());
    assertFalse(SessionResource.cookie("tok", 3600, false).isSecure());
  }

  @Test
  void anEventStreamEndsWhenItsTokenExpires() {
    Caller c = new Caller("t1", "u", 1_000);
    assertFalse(OrderEventsResource.expired(c, 1_000_999), "valid through its expiry second");
    assertTrue(OrderEventsResource.expired(c, 1_001_000));
    assertFalse(OrderEventsResource.expired(new Caller("t1", "u"), Long.MAX_VALUE));
  }
}
