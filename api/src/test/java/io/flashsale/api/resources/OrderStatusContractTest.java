package io.flashsale.api.resources;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flashsale.domain.Effect;
import io.flashsale.domain.OrderStatus;
import java.io.IOException;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The OpenAPI document's statuses are {@link OrderStatus}'s: its OrderStatus schema lists every
 * value and no other, and the effects a callback is answered with at arrival are the
 * {@code DUPLICATE <status>} of exactly the statuses settled for a charge. A status added to the
 * enum without the document fails here.
 */
class OrderStatusContractTest {
  private static final JsonNode DOC = read();

  @Test
  void theOrderStatusSchemaListsEveryStatus() {
    JsonNode schema = DOC.at("/components/schemas/OrderStatus/enum");
    assertEquals(names(Set.of(OrderStatus.values())), texts(schema), "openapi.json OrderStatus against OrderStatus.values()");
  }

  @Test
  void aCallbackAnsweredAtArrivalIsADuplicateOfASettledStatus() {
    Set<String> duplicates = texts(DOC.at("/components/schemas/CallbackAnswer/properties/effect/enum")).stream()
        .filter(e -> e.startsWith(Effect.Kind.DUPLICATE.name() + " ")).collect(Collectors.toCollection(TreeSet::new));
    Set<String> settled = Arrays.stream(OrderStatus.values()).filter(OrderStatus::isSettledForACharge)
        .map(s -> Effect.of(Effect.Kind.DUPLICATE, s).label()).collect(Collectors.toCollection(TreeSet::new));
    assertEquals(settled, duplicates, "openapi.json CallbackAnswer effects against OrderStatus.isSettledForACharge");
  }

  private static Set<String> names(Set<OrderStatus> statuses) {
    return statuses.stream().map(Enum::name).collect(Collectors.toCollection(TreeSet::new));
  }

  private static Set<String> texts(JsonNode array) {
    Set<String> out = new TreeSet<>();
    array.forEach(n -> out.add(n.asText()));
    if (out.isEmpty()) throw new AssertionError("openapi.json has no such enum: " + array);
    return out;
  }

  private static JsonNode read() {
    try {
      return new ObjectMapper().readTree(OpenApiResource.load());
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
