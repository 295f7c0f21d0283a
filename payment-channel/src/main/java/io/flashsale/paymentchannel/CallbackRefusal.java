package io.flashsale.paymentchannel;

/**
 * A callback a {@link CallbackReader} refuses: the HTTP status to answer it with (401 for a
 * signature that cannot be verified, 400 for a body that cannot be read), a stable code and a
 * message for the sender. Nothing of a refused callback is recorded.
 */
public final class CallbackRefusal extends Exception {
  private final int status;
  private final String code;

  public CallbackRefusal(int status, String code, String message) {
    super(message, null, false, false);
    this.status = status;
    this.code = code;
  }

  /** 401: the callback's signature is missing, stale or wrong, or cannot be verified at all. */
  public static CallbackRefusal badSignature(String message) {
    return new CallbackRefusal(401, "BAD_SIGNATURE", message);
  }

  /** 400: the body is not what the channel's format allows. */
  public static CallbackRefusal badRequest(String code, String message) {
    return new CallbackRefusal(400, code, message);
  }

  public int status() {
    return status;
  }

  public String code() {
    return code;
  }

  /** True for a refused signature: the answer carries the callback's authentication challenge. */
  public boolean unauthenticated() {
    return status == 401;
  }
}
