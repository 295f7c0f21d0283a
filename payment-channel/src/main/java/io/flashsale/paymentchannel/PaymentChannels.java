package io.flashsale.paymentchannel;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The payment channels the service talks to, by id: each with its adapter ({@link PaymentChannel})
 * and its callback format ({@link CallbackReader}). One of them is the default: orders are created
 * on it (the {@code orders.channel} column's default is {@value #DEFAULT}), and its callbacks
 * arrive at {@code POST /callbacks/payment}; every channel's at {@code POST /callbacks/payment/<id>}.
 */
public final class PaymentChannels {
  /** The id of the channel wired when only one is configured; {@code orders.channel}'s default (V9). */
  public static final String DEFAULT = "default";
  /** A channel id: it stands in a URL path and in the {@code orders.channel} column. */
  public static final Pattern ID = Pattern.compile("[a-z0-9][a-z0-9-]{0,31}");

  /** One registered channel. */
  public record Entry(String id, PaymentChannel channel, CallbackReader callbacks) {
    public Entry {
      Objects.requireNonNull(channel, "channel");
      Objects.requireNonNull(callbacks, "callbacks");
      if (id == null || !ID.matcher(id).matches()) {
        throw new IllegalArgumentException("a channel id must match " + ID.pattern() + ": " + id);
      }
    }
  }

  private final Map<String, Entry> byId;
  private final String defaultId;

  private PaymentChannels(Map<String, Entry> byId, String defaultId) {
    this.byId = Collections.unmodifiableMap(byId);
    this.defaultId = defaultId;
  }

  /** One channel, registered as {@value #DEFAULT}. */
  public static PaymentChannels single(PaymentChannel channel, CallbackReader callbacks) {
    return builder().add(DEFAULT, channel, callbacks).build(DEFAULT);
  }

  public static Builder builder() {
    return new Builder();
  }

  public static final class Builder {
    private final Map<String, Entry> byId = new LinkedHashMap<>();

    private Builder() {}

    public Builder add(String id, PaymentChannel channel, CallbackReader callbacks) {
      Entry e = new Entry(id, channel, callbacks);
      if (byId.putIfAbsent(id, e) != null) throw new IllegalArgumentException("channel " + id + " registered twice");
      return this;
    }

    /** The registry, with {@code defaultId} (one of the ids added) as the default channel. */
    public PaymentChannels build(String defaultId) {
      if (!byId.containsKey(defaultId)) {
        throw new IllegalArgumentException("the default channel " + defaultId + " is not registered: " + byId.keySet());
      }
      return new PaymentChannels(new LinkedHashMap<>(byId), defaultId);
    }
  }

  public String defaultId() {
    return defaultId;
  }

  /** The ids, in the order they were added. */
  public Set<String> ids() {
    return byId.keySet();
  }

  /** True when only one channel is registered: every order is on it, nothing needs routing. */
  public boolean single() {
    return byId.size() == 1;
  }

  /** The channel of that id, or null when none is registered under it. */
  public Entry find(String id) {
    return id == null ? null : byId.get(id);
  }

  /** The channel of that id; an unknown id is a configuration error. */
  public Entry get(String id) {
    Entry e = find(id);
    if (e == null) throw new IllegalArgumentException("no payment channel " + id + " is registered: " + byId.keySet());
    return e;
  }

  public Entry defaultEntry() {
    return byId.get(defaultId);
  }

  /** The default channel's adapter. */
  public PaymentChannel defaultChannel() {
    return defaultEntry().channel();
  }
}
