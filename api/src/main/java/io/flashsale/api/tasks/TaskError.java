package io.flashsale.api.tasks;

/** A refused admin task call: its HTTP status, a stable code, and the parameter at fault (if one). */
public final class TaskError extends RuntimeException {
  private final int status;
  private final String code;
  private final String parameter;

  public TaskError(int status, String code, String parameter, String message) {
    super(message);
    this.status = status;
    this.code = code;
    this.parameter = parameter;
  }

  public static TaskError missing(String parameter) {
    return new TaskError(400, "MISSING_PARAMETER", parameter, "missing parameter " + parameter);
  }

  public static TaskError invalid(String parameter, String message) {
    return new TaskError(400, "INVALID_PARAMETER", parameter, message);
  }

  public int status() {
    return status;
  }

  public String code() {
    return code;
  }

  public String parameter() {
    return parameter;
  }
}
