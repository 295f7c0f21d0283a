package io.flashsale.domain;

/** How a create ended (docs/DESIGN.md §Workflow design). Only CREATED and REPLAY carry an order. */
public enum CreateOutcome {
  /** This call made the order (or is the retry of the attempt that did). */
  CREATED,
  /** The key already had this order: a retry, answered with it. */
  REPLAY,
  SOLD_OUT,
  USER_LIMIT,
  /** The key was used before with another body. */
  KEY_REUSED,
  UNKNOWN_SKU
}
