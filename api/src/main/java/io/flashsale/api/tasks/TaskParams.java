package io.flashsale.api.tasks;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * A task's query parameters, checked before anything is read or written: unknown names (a typo
 * would otherwise be ignored silently), repeated names, missing or malformed values are a
 * {@link TaskError}. An empty value counts as omitted.
 */
public final class TaskParams {
  private static final Pattern DIGITS = Pattern.compile("[0-9]{1,18}");
  private final Map<String, List<String>> params;

  public TaskParams(Map<String, List<String>> params, Set<String> allowed) {
    this.params = params;
    for (Map.Entry<String, List<String>> e : params.entrySet()) {
      if (!allowed.contains(e.getKey())) {
        throw new TaskError(400, "UNKNOWN_PARAMETER", e.getKey(),
            "unknown parameter " + e.getKey() + "; this task takes " + new TreeSet<>(allowed));
      }
      if (e.getValue() != null && e.getValue().size() > 1) {
        throw TaskError.invalid(e.getKey(), e.getKey() + " is given more than once");
      }
    }
  }

  /** The value, or null when omitted or empty. */
  public String optional(String name) {
    List<String> v = params.get(name);
    return v == null || v.isEmpty() || v.get(0).isEmpty() ? null : v.get(0);
  }

  public String name(String name, Pattern pattern) {
    String v = optional(name);
    if (v == null) throw TaskError.missing(name);
    if (!pattern.matcher(v).matches()) throw TaskError.invalid(name, name + " must match " + pattern.pattern());
    return v;
  }

  public long number(String name, long min, long max) {
    Long v = optionalNumber(name, min, max);
    if (v == null) throw TaskError.missing(name);
    return v;
  }

  /** A whole number in min..max, or null when omitted. */
  public Long optionalNumber(String name, long min, long max) {
    String v = optional(name);
    if (v == null) return null;
    long n = DIGITS.matcher(v).matches() ? Long.parseLong(v) : -1;
    if (n < min || n > max) throw TaskError.invalid(name, name + " must be a whole number in " + min + ".." + max);
    return n;
  }

  public String choice(String name, String fallback, Set<String> choices) {
    String v = optional(name);
    if (v == null) return fallback;
    if (!choices.contains(v)) throw TaskError.invalid(name, name + " must be one of " + new TreeSet<>(choices));
    return v;
  }
}
