package io.flashsale.api.resources;

import com.codahale.metrics.Counter;
import com.fasterxml.jackson.databind.JsonNode;
import io.dropwizard.auth.Auth;
import io.flashsale.api.auth.Caller;
import io.flashsale.api.core.ApiError;
import io.flashsale.api.core.Bodies;
import io.flashsale.api.representations.CommandAnswer;
import io.flashsale.api.representations.OrderBody;
import io.flashsale.api.representations.OrderPage;
import io.flashsale.api.representations.OrderSummary;
import io.flashsale.api.representations.OutcomeBody;
import io.flashsale.domain.CommandOutcome;
import io.flashsale.domain.CreateOrder;
import io.flashsale.domain.CreateOutcome;
import io.flashsale.domain.CreateResult;
import io.flashsale.persistence.OrderQueries.KeyedOrder;
import io.flashsale.persistence.OrderQueries.OrderDetails;
import io.flashsale.persistence.OrderQueries;
import io.flashsale.persistence.PayAnswers;
import io.flashsale.persistence.PrincipalView;
import io.flashsale.persistence.Skus;
import io.flashsale.persistence.StockView;
import io.flashsale.workflows.CommandResult;
import io.flashsale.workflows.Orders;
import io.temporal.client.WorkflowNotFoundException;
import io.temporal.client.WorkflowServiceException;
import io.temporal.client.WorkflowUpdateException;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.StreamingOutput;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Orders of the calling principal (docs/DESIGN.md §REST API). */
@Path("/orders")
@Produces(MediaType.APPLICATION_JSON)
public class OrderResource {
  private static final Logger log = LoggerFactory.getLogger(OrderResource.class);
  private static final Pattern REQUEST_KEY = Pattern.compile("[A-Za-z0-9._:-]{1,64}");
  /** Also what the admin task accepts as a SKU name. */
  public static final Pattern SKU = Pattern.compile("[A-Za-z0-9._-]{1,64}");
  private static final Pattern NOTE = Pattern.compile("(?s).{0,200}");

  private final Orders orders;
  private final OrderQueries queries;
  private final Skus skus;
  /** The in-memory sold-out view; null: every create reads the stock (the old gate). */
  private final StockView stockView;
  /** Who has any order, in memory; null: a sold-out answer reads the request key from the database. */
  private final PrincipalView principalView;
  /** Sold-out answers that read the request key from the database (the view could not say "no order"). */
  private final Counter keyFromDatabase = new Counter();
  private final Map<CreateOutcome, Counter> refused = refusalCounters();

  private static Map<CreateOutcome, Counter> refusalCounters() {
    Map<CreateOutcome, Counter> counters = new java.util.EnumMap<>(CreateOutcome.class);
    for (CreateOutcome o : CreateOutcome.values()) counters.put(o, new Counter());
    return counters;
  }

  /** Creates refused SOLD_OUT from the view, without a stock read. */
  private final Counter gateFromView = new Counter();
  /** Creates refused 503 OVERLOADED at the admission bound (the metric flashsale.gate.overloaded). */
  private final Counter overloaded = new Counter();
  /** Creates whose gate read the stock from the database (the view did not know the SKU sold out, fresh). */
  private final Counter gateFromDatabase = new Counter();
  /** Bounded admission: a sale-day spike is refused at once instead of queueing (docs/DESIGN.md §Overload). */
  private final CreateAdmission admission;
  /** Exports streaming at once, each holding a pooled connection: a global cap and a share per principal. */
  private final PrincipalSlots exports;
  /** The first answer to each keyed pay, for retries the engine no longer knows; null: none recorded (the old pay). */
  private final PayAnswers payAnswers;

  public OrderResource(Orders orders, OrderQueries queries, Skus skus, int maxCreatesInFlight, int maxExports) {
    this(orders, queries, skus, null, maxCreatesInFlight, maxExports);
  }

  public OrderResource(Orders orders, OrderQueries queries, Skus skus, StockView stockView, int maxCreatesInFlight,
      int maxExports) {
    this(orders, queries, skus, stockView, CreateAdmission.fixed(maxCreatesInFlight), maxExports);
  }

  public OrderResource(Orders orders, OrderQueries queries, Skus skus, StockView stockView, CreateAdmission admission,
      int maxExports) {
    this(orders, queries, skus, stockView, null, admission, maxExports);
  }

  public OrderResource(Orders orders, OrderQueries queries, Skus skus, StockView stockView, PrincipalView principalView,
      CreateAdmission admission, int maxExports) {
    this(orders, queries, skus, stockView, principalView, admission, maxExports, defaultExportShare(maxExports));
  }

  /** One principal's share of the exports when none is configured: half of them, at least one. */
  static int defaultExportShare(int maxExports) {
    return Math.max(1, maxExports / 2);
  }

  public OrderResource(Orders orders, OrderQueries queries, Skus skus, StockView stockView, PrincipalView principalView,
      CreateAdmission admission, int maxExports, int maxExportsPerPrincipal) {
    this(orders, queries, skus, stockView, principalView, admission, maxExports, maxExportsPerPrincipal, null);
  }

  public OrderResource(Orders orders, OrderQueries queries, Skus skus, StockView stockView, PrincipalView principalView,
      CreateAdmission admission, int maxExports, int maxExportsPerPrincipal, PayAnswers payAnswers) {
    this.orders = orders;
    this.queries = queries;
    this.skus = skus;
    this.stockView = stockView;
    this.principalView = principalView;
    this.admission = admission;
    this.exports = new PrincipalSlots(maxExports, maxExportsPerPrincipal);
    this.payAnswers = payAnswers;
  }

  @POST
  @Consumes(MediaType.APPLICATION_JSON)
  public Response create(@Auth Caller caller, JsonNode body) {
    Bodies.object(body, Set.of("request_key", "sku", "quantity", "note"));
    String requestKey = Bodies.text(body, "request_key", REQUEST_KEY, true);
    String sku = Bodies.text(body, "sku", SKU, true);
    int quantity = (int) Bodies.integer(body, "quantity", 1, 3);
    String note = Bodies.text(body, "note", NOTE, false);
    CreateOrder request = new CreateOrder(caller.tenant(), caller.subject(), requestKey, sku, quantity, note);
    // the cheap gate: no Temporal round trip once sold out, unless this key already has an order to answer
    // with. Sold out per the in-memory view (learned within its bound): no read of the hot SKU row. Anything
    // else the view says (available, not known, stale) is checked against the database as before; the
    // reserve in the workflow decides every sale either way.
    KeyedOrder keyed;
    long soldOutSeen = stockView == null ? StockView.NOT_SOLD_OUT : stockView.soldOutSeenAt(caller.tenant(), sku);
    if (soldOutSeen != StockView.NOT_SOLD_OUT) {
      // a buyer the caller view knows has no order at all, from a poll that started after every
      // order of this SKU was committed, has no order under this key either: no read at all
      if (principalView != null && principalView.hasNoOrder(caller.tenant(), caller.subject(), soldOutSeen)) {
        gateFromView.inc();
        return outcome(409, CreateOutcome.SOLD_OUT);
      }
      keyFromDatabase.inc();
      keyed = queries.keyedOrder(caller.tenant(), caller.subject(), requestKey);
      if (keyed == null) {
        gateFromView.inc();
        return outcome(409, CreateOutcome.SOLD_OUT);
      }
    } else if (admission.full() && stockView != null
        && stockView.answer(caller.tenant(), sku) == StockView.Answer.AVAILABLE && principalView != null
        && principalView.hasNoOrder(caller.tenant(), caller.subject(), anyPollWithinItsBound())) {
      // overloaded on a SKU that is on sale, and the buyer has no order: refused before any read, so a
      // crowd's retries cost the pool nothing (DESIGN.md §Overload); a buyer who may have one reads its key
      admission.refused(); // a refusal at the bound like tryAdmit's: the service stays under load
      return overloadedAnswer();
    } else {
      gateFromDatabase.inc();
      int remaining = skus.remaining(caller.tenant(), sku);
      if (remaining < 0) return outcome(404, CreateOutcome.UNKNOWN_SKU);
      keyed = queries.keyedOrder(caller.tenant(), caller.subject(), requestKey);
      if (remaining == 0 && keyed == null) {
        return outcome(409, CreateOutcome.SOLD_OUT);
      }
    }
    // a retry of a key that has its order is answered from the row, whether or not the order's run is
    // still open: no engine call, no update in its history, no new run after it closed (DESIGN.md §REST API)
    if (keyed != null) {
      if (principalView != null) principalView.noteOrdered(caller.tenant(), caller.subject());
      if (!keyed.payload().equals(request.payload())) return outcome(422, CreateOutcome.KEY_REUSED);
      return createAnswer(CreateOutcome.REPLAY, keyed.orderId());
    }
    // a retry of a key whose engine call is still going here (its first try was answered 503 at the
    // deadline) joins that call: no second update in the run, no second place under the bound
    Orders.CreateCall call = orders.createInFlight(request);
    if (call == null) {
      switch (admission.tryAdmit(caller)) {
        case OVERLOADED -> {
          return overloadedAnswer();
        }
        case PRINCIPAL_SHARE_USED -> {
          return ApiError.tooMany(1, "CREATES_PER_PRINCIPAL",
              "this principal's creates are all in flight; retry with the same key");
        }
        case ADMITTED -> { }
      }
      try {
        call = orders.startCreate(request);
      } catch (RuntimeException | Error e) {
        admission.done(caller, false);
        throw e;
      }
      if (call.started()) {
        // the place is held until the engine ends the call, not until this request stops waiting: the
        // bound counts the creates the engine is working on (docs/DESIGN.md §Overload)
        call.answer().whenComplete((answer, failure) -> admission.done(caller, failure == null));
      } else {
        admission.done(caller, false); // another request of the key started the call a moment before
      }
    }
    CreateResult r;
    try {
      r = orders.await(call);
    } catch (WorkflowServiceException | Orders.DeadlineExceeded e) {
      // its reserve may have committed: this buyer's next tries read the key, so they get the order
      if (principalView != null) principalView.noteOrdered(caller.tenant(), caller.subject());
      if (e instanceof Orders.DeadlineExceeded) admission.missedDeadline(); // many: the queue outgrew the deadline
      log.warn("create {}/{} key {}: engine unavailable: {}", caller.tenant(), caller.subject(), requestKey, e.toString());
      throw engineUnavailable("the order engine did not answer; retry with the same key");
    }
    // REPLAY from the workflow: a call that raced the first one with the key and lost
    if (principalView != null && r.order() != null) principalView.noteOrdered(caller.tenant(), caller.subject());
    // a retry that joined the first try's call: that try made the order, this one reads it
    if (!call.started() && r.outcome() == CreateOutcome.CREATED) return createAnswer(CreateOutcome.REPLAY, r.order().orderId());
    return switch (r.outcome()) {
      case CREATED, REPLAY -> r.outcome() == CreateOutcome.CREATED && r.createdAt() != null
          ? json(201, OrderBody.of(CreateOutcome.CREATED, asCreated(request, r)))
          : createAnswer(r.outcome(), r.order().orderId());
      case SOLD_OUT, USER_LIMIT -> outcome(409, r.outcome());
      case KEY_REUSED -> outcome(422, r.outcome());
      case UNKNOWN_SKU -> outcome(404, r.outcome());
    };
  }

  /** Marks a create's answer that is a replay of an earlier one with the key (the common convention). */
  public static final String REPLAYED_HEADER = "Idempotent-Replayed";

  /**
   * 201 CREATED for the call that made the order; 200 REPLAY, with {@value #REPLAYED_HEADER}: true,
   * for every later call with its key and body. Both carry the order as its create made it.
   */
  private Response createAnswer(CreateOutcome outcome, String orderId) {
    OrderBody body = createdAnswer(outcome, queries.get(orderId));
    if (outcome == CreateOutcome.CREATED) return json(201, body);
    return Response.status(200).type(MediaType.APPLICATION_JSON_TYPE).header(REPLAYED_HEADER, "true").entity(body).build();
  }

  /**
   * The order as the create that made it answered, from its result: no read of the row. The same
   * fields {@link #createdAnswer} reads back for a replay (C29-01 and CAP-02 compare the bytes).
   */
  static OrderDetails asCreated(CreateOrder request, CreateResult r) {
    io.flashsale.domain.OrderView o = r.order();
    return new OrderDetails(o.orderId(), o.tenant(), o.subject(), request.requestKey(),
        io.flashsale.domain.OrderStatus.CREATED, 1, o.sku(), o.quantity(), o.amount(), request.note(),
        o.reservationKey(), "HELD", io.flashsale.workflows.WorkflowIds.forScope(request.tenant(), request.subject(),
        request.requestKey()), r.createdAt(),
        List.of(new io.flashsale.persistence.OrderQueries.TimelineEntry(null, io.flashsale.domain.OrderStatus.CREATED, 1,
            "create", r.createdAt())));
  }

  /**
   * The order as the create made it, the same fields for the first call and every retry with its
   * key and body: status CREATED, version 1, its first reservation HELD and the first transition;
   * GET shows where it is now. Only the outcome tells the first call (CREATED) from a replay.
   */
  static OrderBody createdAnswer(CreateOutcome outcome, OrderDetails o) {
    OrderDetails asCreated = new OrderDetails(o.orderId(), o.tenant(), o.subject(), o.requestKey(),
        io.flashsale.domain.OrderStatus.CREATED, 1, o.sku(), o.quantity(), o.amount(), o.note(),
        io.flashsale.persistence.Inventory.firstReservationKey(o.orderId()), "HELD", o.workflowId(),
        o.createdAt(), o.timeline().stream().filter(t -> t.version() == 1).toList());
    return OrderBody.of(outcome, asCreated);
  }

  @POST
  @Path("/{id}/pay")
  public Response pay(@Auth Caller caller, @PathParam("id") String id,
      @HeaderParam("Idempotency-Key") String idempotencyKey) {
    OrderDetails o = owned(caller, id);
    String key = idempotencyKey(idempotencyKey);
    Function<String, CommandResult> call = wf -> orders.pay(wf, key);
    Function<CommandResult, Integer> code = r -> r.outcome() == null ? 200 : 409;
    if (key == null || payAnswers == null) return answer(o, call, code, false).response();
    // the engine answers a retried key while the update id is in the order's current run; a run that
    // never saw it (a newer run: late notice, continue-as-new, repair) refuses it, and with no run
    // (history past retention) the row answers: then a key answered before gets that first answer
    // (docs/DESIGN.md §Idempotency-Key lifetimes)
    Answered a;
    try {
      a = answer(o, call, code, false);
    } catch (jakarta.ws.rs.WebApplicationException unavailable) {
      // no answer from the engine (the 503s): a key answered before has its answer
      PayAnswers.Answer first = payAnswers.recorded(o.orderId(), key);
      if (first == null) throw unavailable;
      return replayed(o.orderId(), key, first);
    }
    if (!a.byEngine() || a.body().outcome() != null) {
      PayAnswers.Answer first = payAnswers.recorded(o.orderId(), key);
      if (first != null) return replayed(o.orderId(), key, first);
    }
    // only the engine's answer to this key is the key's answer: one read from the row (no run) may
    // be a refusal of a pay the engine took before a lost reply, and must not stand for it later
    if (a.byEngine()) remember(o.orderId(), key, a);
    return a.response();
  }

  /** The recorded first answer to a keyed pay: the same status and body as then. */
  private Response replayed(String orderId, String key, PayAnswers.Answer first) {
    log.debug("order {} pay key {}: answered as first at {}", orderId, key, first.answeredAt());
    return json(first.httpStatus(), new CommandAnswer(first.outcome(), orderId, first.status(), first.version()));
  }

  /** Records a keyed pay's answer (the first one recorded wins); a failure to record costs the retry only, not this answer. */
  private void remember(String orderId, String key, Answered a) {
    try {
      payAnswers.remember(orderId, key,
          new PayAnswers.Answer(a.code(), a.body().outcome(), a.body().status(), a.body().version()));
    } catch (io.flashsale.persistence.Database.DatabaseException e) {
      log.warn("order {} pay key {}: answer {} not recorded: {}", orderId, key, a.code(), e.toString());
    }
  }

  @POST
  @Path("/{id}/cancel")
  public Response cancel(@Auth Caller caller, @PathParam("id") String id,
      @HeaderParam("Idempotency-Key") String idempotencyKey) {
    OrderDetails o = owned(caller, id);
    String key = idempotencyKey(idempotencyKey);
    return command(o, wf -> orders.cancel(wf, key), r -> CommandOutcome.REJECTED.equals(r.outcome()) ? 409 : 200, true);
  }

  /** Own orders as CSV, streamed row by row; an aborted download closes the cursor at once. */
  @GET
  @Path("/export.csv")
  @Produces("text/csv")
  public Response export(@Auth Caller caller, @jakarta.ws.rs.core.Context jakarta.servlet.http.HttpServletRequest request) {
    if (OwnOrders.isHead(request)) {
      // no body will be written, so no slot is taken (a StreamingOutput never written never gives one back)
      return Response.ok().type("text/csv").header("Content-Disposition", "attachment; filename=orders.csv").build();
    }
    // each export holds a pooled connection while it streams: bound them so the pool stays for orders
    PrincipalSlots.Slot slot = exports.tryAcquire(caller);
    if (slot.refusal() == PrincipalSlots.Refusal.SERVICE_FULL) {
      return ApiError.unavailable(5, "EXPORTS_EXHAUSTED", "too many exports running; retry later");
    }
    if (slot.refusal() == PrincipalSlots.Refusal.PRINCIPAL_FULL) {
      return ApiError.tooMany(5, "EXPORTS_PER_PRINCIPAL", "this principal's exports are all running; retry later");
    }
    StreamingOutput body = out -> {
      openExports.incrementAndGet();
      java.io.Writer w = new java.io.BufferedWriter(new java.io.OutputStreamWriter(out, java.nio.charset.StandardCharsets.UTF_8));
      try {
        io.flashsale.api.core.OrderCsv csv = new io.flashsale.api.core.OrderCsv(w);
        int[] n = {0};
        queries.export(caller.tenant(), caller.subject(), o -> {
          csv.write(o);
          if (++n[0] % 500 == 0) csv.flush();
        });
        csv.flush();
        w.flush();
      } catch (java.io.IOException aborted) {
        log.info("export for {}/{} aborted by the client: {}", caller.tenant(), caller.subject(), aborted.toString());
        throw aborted;
      } finally {
        openExports.decrementAndGet();
        slot.release();
      }
    };
    return Response.ok(body, "text/csv").header("Content-Disposition", "attachment; filename=orders.csv").build();
  }

  /** Creates answered SOLD_OUT from the stock view (the metric flashsale.gate.soldOutFromView). */
  public Counter gateFromView() {
    return gateFromView;
  }

  /** Creates refused 503 OVERLOADED at the admission bound (the metric flashsale.gate.overloaded). */
  public Counter overloaded() {
    return overloaded;
  }

  /** The admission bound and what is in flight under it (gauges flashsale.admission.*). */
  public CreateAdmission admission() {
    return admission;
  }

  /** Sold-out answers that read the request key (the metric flashsale.gate.keyReads). */
  public Counter keyFromDatabase() {
    return keyFromDatabase;
  }

  /** Creates whose gate read the stock from the database (the metric flashsale.gate.databaseReads). */
  public Counter gateFromDatabase() {
    return gateFromDatabase;
  }

  /** Exports streaming right now (the metric flashsale.exports.open). */
  public int openExports() {
    return openExports.get();
  }

  private final java.util.concurrent.atomic.AtomicInteger openExports = new java.util.concurrent.atomic.AtomicInteger();

  @GET
  @Path("/{id}")
  public OrderBody get(@Auth Caller caller, @PathParam("id") String id) {
    return OrderBody.of(owned(caller, id));
  }

  @GET
  public OrderPage list(@Auth Caller caller, @QueryParam("limit") String limit,
      @QueryParam("cursor") String cursor) {
    // a String, parsed here: a non-numeric limit is a 400 with a code, not Jersey's 404
    int n = 20;
    if (limit != null) {
      if (!limit.matches("\\d{1,3}")) throw ApiError.badRequest("INVALID_LIMIT", "limit must be in 1..100");
      n = Integer.parseInt(limit);
    }
    if (n < 1 || n > 100) throw ApiError.badRequest("INVALID_LIMIT", "limit must be in 1..100");
    if (cursor != null && !OwnOrders.ORDER_ID.matcher(cursor).matches()) throw ApiError.badRequest("INVALID_CURSOR", "bad cursor");
    List<OrderDetails> page = queries.list(caller.tenant(), caller.subject(), cursor, n + 1);
    List<OrderSummary> items = page.subList(0, Math.min(n, page.size())).stream().map(OrderSummary::of).toList();
    return new OrderPage(items, page.size() > n ? page.get(n - 1).orderId() : null);
  }

  private OrderDetails owned(Caller caller, String id) {
    return OwnOrders.require(queries, caller, id);
  }

  /**
   * Optional; when given it names the command, so a client's retry gets the original answer. The
   * IETF draft's form is a structured-field string ({@code "k1"}); the bare token ({@code k1}) is
   * taken too, and both name the same key. A key's characters never need escaping, so a quoted
   * key holds none.
   */
  static String idempotencyKey(String header) {
    if (header == null) return null;
    String key = header.length() >= 2 && header.startsWith("\"") && header.endsWith("\"")
        ? header.substring(1, header.length() - 1) : header;
    if (!REQUEST_KEY.matcher(key).matches()) {
      throw ApiError.badRequest("INVALID_IDEMPOTENCY_KEY",
          "Idempotency-Key must match " + REQUEST_KEY.pattern() + ", bare or as a quoted string");
    }
    return key;
  }

  private Response command(OrderDetails o, Function<String, CommandResult> call, Function<CommandResult, Integer> code,
      boolean closedCancel) {
    return answer(o, call, code, closedCancel).response();
  }

  /** A command's answer: from the order's run (byEngine), or from the row when no run answered. */
  private record Answered(int code, CommandAnswer body, boolean byEngine) {
    Response response() {
      return json(code, body);
    }
  }

  private Answered answer(OrderDetails o, Function<String, CommandResult> call, Function<CommandResult, Integer> code,
      boolean closedCancel) {
    CommandResult r;
    try {
      r = call.apply(o.workflowId());
    } catch (Orders.DeadlineExceeded e) {
      log.warn("order {} command: {}", o.orderId(), e.getMessage());
      throw engineUnavailable("the order workflow did not answer in time; retry (with the same Idempotency-Key)");
    } catch (WorkflowNotFoundException | WorkflowUpdateException | WorkflowServiceException e) {
      OrderDetails now = queries.get(o.orderId());
      if (!now.status().isTerminal()) {
        // the order is still moving: a transient engine problem, not an answer
        log.warn("order {} command failed: {}", o.orderId(), e.toString());
        throw engineUnavailable("the order workflow did not answer; retry");
      }
      // final order whose workflow completed after its late-notice window: answer from the row
      boolean replayCancel = closedCancel && now.status() == io.flashsale.domain.OrderStatus.CANCELLED;
      return new Answered(replayCancel ? 200 : 409, new CommandAnswer(
          replayCancel ? CommandOutcome.REPLAY_CANCEL : CommandOutcome.REJECTED, o.orderId(), now.status(), now.version()),
          false);
    }
    return new Answered(code.apply(r), new CommandAnswer(r.outcome(), o.orderId(), r.status(), r.version()), true);
  }

  /** 503 with Retry-After: the engine is slow or away, the same request may be sent again. */
  private static jakarta.ws.rs.WebApplicationException engineUnavailable(String message) {
    return new jakarta.ws.rs.WebApplicationException(message,
        ApiError.unavailable(1, "ENGINE_UNAVAILABLE", message));
  }

  /** A caller-view "no order" from any poll within its bound will do: the buyers this process saw order are noted at once. */
  private long anyPollWithinItsBound() {
    return System.nanoTime() - java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(principalView.boundMillis()) - 1;
  }

  /**
   * 503 OVERLOADED with Retry-After: nothing was written, the same key may be sent again. A create
   * outcome (the source chapter's contract), so JSON with an outcome, not a problem detail.
   */
  /**
   * At most this many OVERLOADED refusals wait {@link #REFUSAL_PACE_MILLIS} before they are sent:
   * a client that ignores Retry-After and sends again at once (a closed loop) then sends a few
   * refusals per second per connection instead of thousands, which would take the CPU the engine
   * needs to finish the creates admitted (docs/DESIGN.md §Overload). Past that many, a refusal is
   * answered at once, so a crowd holds no more threads than this.
   */
  static final int PACED_REFUSALS = 64;
  static final long REFUSAL_PACE_MILLIS = 200;
  private final java.util.concurrent.Semaphore pacedRefusals = new java.util.concurrent.Semaphore(PACED_REFUSALS);

  private Response overloadedAnswer() {
    overloaded.inc();
    if (pacedRefusals.tryAcquire()) {
      try {
        Thread.sleep(REFUSAL_PACE_MILLIS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        pacedRefusals.release();
      }
    }
    return Response.status(503).header("Retry-After", "1").type(MediaType.APPLICATION_JSON_TYPE)
        .entity(new OutcomeBody("OVERLOADED", "too many orders in flight; retry with the same key")).build();
  }

  /**
   * A create that made no order: counted per outcome (flashsale.create.refused.*), not logged, and
   * answered with its body rendered once, the same bytes the JSON writer would produce.
   */
  private Response outcome(int status, CreateOutcome outcome) {
    refused.get(outcome).inc();
    return Response.status(status).type(MediaType.APPLICATION_JSON_TYPE).entity(REFUSAL_BODIES.get(outcome)).build();
  }

  private static final Map<CreateOutcome, byte[]> REFUSAL_BODIES = refusalBodies();

  private static Map<CreateOutcome, byte[]> refusalBodies() {
    com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
    Map<CreateOutcome, byte[]> bodies = new java.util.EnumMap<>(CreateOutcome.class);
    for (CreateOutcome o : CreateOutcome.values()) {
      try {
        bodies.put(o, json.writeValueAsBytes(new OutcomeBody(o.name(), null)));
      } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
        throw new IllegalStateException(e);
      }
    }
    return bodies;
  }

  /** Creates refused with each outcome (the metrics flashsale.create.refused.OUTCOME). */
  public Map<CreateOutcome, Counter> refused() {
    return refused;
  }

  private static Response json(int status, Object body) {
    return Response.status(status).type(MediaType.APPLICATION_JSON_TYPE).entity(body).build();
  }
}
