package io.flashsale.domain;

/** One create request, identity already resolved from the signed token. */
public record CreateOrder(String tenant, String subject, String requestKey, String sku, int quantity, String note) {

  /** The part of the request that must match for a replay of the same key. */
  public String payload() {
    return "sku=" + sku + ";quantity=" + quantity + ";note=" + (note == null ? "" : note);
  }
}
