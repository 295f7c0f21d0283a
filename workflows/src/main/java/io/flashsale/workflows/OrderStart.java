package io.flashsale.workflows;

import io.flashsale.domain.Notice;
import java.util.List;

/**
 * Start arguments. A fresh order starts with orderId null and is created by the create update;
 * a run started by signal-with-start for a known order carries its id and loads it. A run that
 * continues as new also carries when its reservation expires (-1: already expired), so the TTL
 * is not restarted, the notices it had not applied yet and the timeline the status query shows.
 */
public record OrderStart(String tenant, String subject, String requestKey, String orderId, OrderSettings settings,
    Long reservationExpiresAt, List<Notice> pendingNotices, List<String> timeline) {

  public OrderStart(String tenant, String subject, String requestKey, String orderId, OrderSettings settings) {
    this(tenant, subject, requestKey, orderId, settings, null, null, null);
  }
}
