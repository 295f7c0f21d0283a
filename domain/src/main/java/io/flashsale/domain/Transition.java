package io.flashsale.domain;

/** One committed status change (from is null for the create). */
public record Transition(OrderStatus from, OrderStatus to, int version, String cause) {

  /** The seed's timeline notation: {@code [CREATED->PAYING v2 pay]}. */
  public String label() {
    return "[" + (from == null ? "-" : from.name()) + "->" + to + " v" + version + " " + cause + "]";
  }
}
