package io.flashsale.api.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import jakarta.ws.rs.WebApplicationException;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class BodiesTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Pattern ANY = Pattern.compile("(?s).{0,200}");

  private static JsonNode body(String json) throws Exception {
    return JSON.readTree(json);
  }

  private static String code(Runnable r) {
    WebApplicationException e = assertThrows(WebApplicationException.class, r::run);
    assertEquals(400, e.getResponse().getStatus());
    return String.valueOf(e.getResponse().getEntity());
  }

  @Test
  void controlCharactersAndLoneSurrogatesAreRefused() throws Exception {
    assertTrue(code(() -> Bodies.text(uncheck("{\"note\":\"a\\u0000b\"}"), "note", ANY, false)).contains("INVALID_TEXT"));
    assertTrue(code(() -> Bodies.text(uncheck("{\"note\":\"a\\u001bb\"}"), "note", ANY, false)).contains("INVALID_TEXT"));
    assertTrue(code(() -> Bodies.text(uncheck("{\"note\":\"a\\ud800\"}"), "note", ANY, false)).contains("INVALID_TEXT"));
    assertTrue(code(() -> Bodies.text(uncheck("{\"note\":\"\\udc00a\"}"), "note", ANY, false)).contains("INVALID_TEXT"));
    assertEquals("ok \uD83D\uDE00", Bodies.text(body("{\"note\":\"ok \\ud83d\\ude00\"}"), "note", ANY, false));
    assertFalse(Bodies.cleanText("tab\there"));
  }

  @Test
  void integersPast64BitsDoNotWrapIntoRange() throws Exception {
    assertTrue(code(() -> Bodies.integer(uncheck("{\"quantity\":18446744073709551617}"), "quantity", 1, 10))
        .contains("INVALID_FIELD"));
    assertEquals(3, Bodies.integer(body("{\"quantity\":3}"), "quantity", 1, 10));
  }

  @Test
  void integralFloatsAreIntegersAsJsonSchemaSays() throws Exception {
    assertEquals(2, Bodies.integer(body("{\"quantity\":2.0}"), "quantity", 1, 10));
    assertEquals(2, Bodies.integer(body("{\"quantity\":2e0}"), "quantity", 1, 10));
    assertEquals(0, Bodies.integer(body("{\"amount\":-0.0}"), "amount", 0, Long.MAX_VALUE));
    assertTrue(code(() -> Bodies.integer(uncheck("{\"quantity\":2.5}"), "quantity", 1, 10)).contains("INVALID_FIELD"));
    assertTrue(code(() -> Bodies.integer(uncheck("{\"quantity\":1e400}"), "quantity", 1, 10)).contains("INVALID_FIELD"));
    assertTrue(code(() -> Bodies.integer(uncheck("{\"quantity\":1.8446744073709552e19}"), "quantity", 1, 10))
        .contains("INVALID_FIELD"));
    assertTrue(code(() -> Bodies.integer(uncheck("{\"quantity\":\"2\"}"), "quantity", 1, 10)).contains("INVALID_FIELD"));
  }

  @Test
  void unknownFieldsAreIgnoredOnlyWhereAsked() throws Exception {
    JsonNode b = body("{\"kind\":\"CHARGED\",\"channel_extra\":1}");
    assertEquals(b, Bodies.objectIgnoringUnknown(b));
    assertTrue(code(() -> Bodies.object(b, java.util.Set.of("kind"))).contains("UNKNOWN_FIELD"));
  }

  private static JsonNode uncheck(String json) {
    try {
      return body(json);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
