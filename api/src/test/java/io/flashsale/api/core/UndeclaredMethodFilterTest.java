package io.flashsale.api.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.flashsale.api.resources.OpenApiResource;
import org.junit.jupiter.api.Test;

class UndeclaredMethodFilterTest {
  private final UndeclaredMethodFilter filter = new UndeclaredMethodFilter(OpenApiResource.load());

  @Test
  void allowListsTheDocumentedMethodsOfThePath() {
    assertEquals("GET, HEAD, OPTIONS, POST", filter.allowFor("/orders"));
    assertEquals("GET, HEAD, OPTIONS", filter.allowFor("/orders/ord-0001"));
    assertEquals("GET, HEAD, OPTIONS", filter.allowFor("/orders/export.csv"));
    assertEquals("OPTIONS, POST", filter.allowFor("/orders/ord-0001/pay"));
    assertEquals("OPTIONS, POST", filter.allowFor("/callbacks/payment"));
    assertNull(filter.allowFor("/nowhere"));
    assertNull(filter.allowFor("/orders/a/b/c"));
  }
}
