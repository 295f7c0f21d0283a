package io.flashsale.paymentchannel.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flashsale.paymentchannel.ChannelReply;
import io.flashsale.paymentchannel.ChannelResult;
import io.flashsale.paymentchannel.ChargeRequest;
import io.flashsale.paymentchannel.PaymentChannel;
import io.flashsale.paymentchannel.RefundRequest;
import io.flashsale.paymentchannel.StatementRow;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The payment channel over its HTTP contract (docs/DESIGN.md §Channel contract): JSON requests,
 * replies within {@code timeout}, callbacks to {@code notifyUrl}, every call with the merchant's key
 * as a bearer token. Every call without a definite reply answers UNKNOWN; a 4xx without a result
 * is a refusal of the request.
 */
public final class HttpPaymentChannel implements PaymentChannel {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private final String baseUrl;
  private final String notifyUrl;
  private final Duration timeout;
  private final String authorization;
  private final Tracer tracer;

  public HttpPaymentChannel(String baseUrl, String notifyUrl, Duration timeout, String merchantKey) {
    this(baseUrl, notifyUrl, timeout, merchantKey, OpenTelemetry.noop());
  }

  /**
   * @param telemetry each call is a client span, child of the span current on the calling thread
   *     (the activity's), and carries it to the channel in a W3C {@code traceparent} header
   */
  public HttpPaymentChannel(String baseUrl, String notifyUrl, Duration timeout, String merchantKey,
      OpenTelemetry telemetry) {
    if (merchantKey == null || merchantKey.isBlank()) {
      throw new IllegalArgumentException("the payment channel needs the merchant key");
    }
    this.baseUrl = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
    this.notifyUrl = notifyUrl;
    this.timeout = timeout;
    this.authorization = "Bearer " + merchantKey;
    this.tracer = telemetry.getTracer("io.flashsale.paymentchannel");
  }

  private HttpRequest.Builder request(String path, Duration within) {
    return HttpRequest.newBuilder(URI.create(baseUrl + path)).timeout(within).header("Authorization", authorization);
  }

  @Override
  public String describe() {
    return baseUrl;
  }

  @Override
  public ChannelReply charge(ChargeRequest request) {
    return call("charge", post("/charge", Map.of("merchant_order", request.merchantOrder(), "amount", request.amount(),
        "notify_url", notifyUrl)), "result");
  }

  @Override
  public ChannelReply query(String merchantOrder) {
    return call("query", request("/charges/" + merchantOrder, timeout).GET(), "status");
  }

  @Override
  public ChannelReply close(String merchantOrder) {
    return call("close", post("/close", Map.of("merchant_order", merchantOrder)), "status");
  }

  @Override
  public ChannelReply refund(RefundRequest request) {
    return call("refund", post("/refund", Map.of("merchant_order", request.merchantOrder(),
        "refund_key", request.refundKey(), "amount", request.amount())), "result");
  }

  /** No short timeout: the statement is not on the payment path. */
  @Override
  public List<StatementRow> statement() throws IOException, InterruptedException {
    HttpResponse<String> r = http.send(
        request("/statement", Duration.ofSeconds(10)).GET().build(),
        HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 200) throw new IOException("statement answered " + r.statusCode());
    List<StatementRow> rows = new ArrayList<>();
    for (JsonNode row : JSON.readTree(r.body()).path("rows")) {
      StatementRow.Movement movement = switch (row.path("type").asText()) {
        case "CHARGE" -> StatementRow.Movement.CHARGE;
        case "REFUND" -> StatementRow.Movement.REFUND;
        default -> StatementRow.Movement.OTHER;
      };
      rows.add(new StatementRow(row.path("merchant_order").asText(), movement, row.path("amount").asLong()));
    }
    return rows;
  }

  /**
   * One query of a probe merchant order, which any channel of this contract answers (NOT_FOUND)
   * cheaply, unlike the whole statement.
   */
  @Override
  public boolean reachable() {
    return query("health-probe").definite();
  }

  private HttpRequest.Builder post(String path, Map<String, Object> body) {
    try {
      return request(path, timeout)
          .header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
    } catch (IOException e) {
      throw new IllegalArgumentException(e);
    }
  }

  private ChannelReply call(String what, HttpRequest.Builder builder, String field) {
    Span span = tracer.spanBuilder("channel " + what).setSpanKind(SpanKind.CLIENT).startSpan();
    try (Scope ignored = span.makeCurrent()) {
      W3CTraceContextPropagator.getInstance().inject(Context.current(), builder, HttpRequest.Builder::header);
      HttpRequest request = builder.build();
      span.setAttribute("http.request.method", request.method());
      span.setAttribute("url.full", request.uri().toString());
      ChannelReply reply = send(what, request, field, span);
      span.setAttribute("channel.result", reply.result().name());
      if (reply.result() == ChannelResult.UNKNOWN) span.setStatus(StatusCode.ERROR, reply.detail());
      return reply;
    } finally {
      span.end();
    }
  }

  private ChannelReply send(String what, HttpRequest request, String field, Span span) {
    HttpResponse<String> r;
    try {
      r = http.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (HttpTimeoutException e) {
      return ChannelReply.unknown("timeout");
    } catch (IOException e) {
      return ChannelReply.unknown("io error");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return ChannelReply.unknown("interrupted");
    }
    span.setAttribute("http.response.status_code", r.statusCode());
    try {
      JsonNode body = JSON.readTree(r.body());
      if (r.statusCode() == 200 || (r.statusCode() == 409 && body.has("result"))) {
        String word = body.path(field).asText(body.path("result").asText(body.path("status").asText()));
        return new ChannelReply(ChannelResult.parse(word), body.path("txn").asText(null), what + " " + r.statusCode(),
            false);
      }
      boolean refused = r.statusCode() >= 400 && r.statusCode() < 500;
      return new ChannelReply(ChannelResult.UNKNOWN, null, what + " answered " + r.statusCode() + " " + r.body(),
          refused);
    } catch (IOException e) {
      return ChannelReply.unknown(what + " unreadable reply");
    }
  }
}
