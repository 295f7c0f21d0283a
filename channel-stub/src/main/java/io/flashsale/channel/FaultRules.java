package io.flashsale.channel;

import java.util.HashMap;
import java.util.Map;

/** Fault rules per merchant order plus a default rule for orders that have no rule of their own. */
final class FaultRules {
  private final Map<String, FaultRule> byOrder = new HashMap<>();
  private FaultRule defaultRule = FaultRule.NONE;

  /** Merges {@code update} into the order's rule, or into the default rule when merchantOrder is null. */
  synchronized void apply(String merchantOrder, FaultRule update) {
    if (merchantOrder == null) {
      defaultRule = defaultRule.mergedWith(update);
    } else {
      byOrder.merge(merchantOrder, update, FaultRule::mergedWith);
    }
  }

  /** The order's own rule if it has one, else the default rule. */
  synchronized FaultRule effective(String merchantOrder) {
    FaultRule own = merchantOrder == null ? null : byOrder.get(merchantOrder);
    return own != null ? own : defaultRule;
  }

  synchronized void reset() {
    byOrder.clear();
    defaultRule = FaultRule.NONE;
  }
}
