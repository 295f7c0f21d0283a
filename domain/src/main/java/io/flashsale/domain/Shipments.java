package io.flashsale.domain;

import java.util.Map;

/**
 * What the fulfillment service has shipped, as its own tables record it: the port reconciliation
 * reads to check that no order was shipped more than once. The fulfillment consumer answers it
 * through its own pool and schema.
 */
public interface Shipments {
  /** Every order shipped at least once, with how many times it was shipped. */
  Map<String, Integer> shipCounts();
}
