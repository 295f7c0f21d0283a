package io.flashsale.api.resources;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.flashsale.paymentchannel.CallbackSignatures;
import io.flashsale.problem.Problem;
import jakarta.ws.rs.WebApplicationException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Callback verification fails closed: without a secret nothing is verified, so nothing is taken. */
class CallbackVerificationTest {
  private static final byte[] BODY = ("{\"notify_id\":\"n1\",\"merchant_order\":\"ord-0001\",\"kind\":\"CHARGED\","
      + "\"amount\":1990,\"txn\":\"t1\"}").getBytes(StandardCharsets.UTF_8);

  @Test
  void withoutASecretEveryCallbackIsRefusedBeforeAnythingIsRecorded() {
    // no notifications, queries or engine: a refused callback must not reach them
    for (List<String> none : List.of(List.<String>of(), Arrays.asList("", null))) {
      CallbackResource resource = new CallbackResource(null, null, null, none);
      for (String signature : new String[] {null, "t=1,v1=" + "0".repeat(64),
          CallbackSignatures.header("any-secret", System.currentTimeMillis() / 1000, BODY)}) {
        WebApplicationException e = assertThrows(WebApplicationException.class, () -> resource.receive(signature, BODY));
        assertEquals(401, e.getResponse().getStatus());
        assertEquals("BAD_SIGNATURE", ((Problem) e.getResponse().getEntity()).code());
        assertEquals("application/problem+json", e.getResponse().getMediaType().toString());
        assertEquals("Signature realm=\"flashsale-callbacks\", header=\"X-Channel-Signature\"",
            e.getResponse().getHeaderString("WWW-Authenticate"));
      }
    }
  }

  @Test
  void aSignatureOfNeitherAcceptedSecretIsRefused() {
    CallbackResource resource = new CallbackResource(null, null, null, List.of("current-secret", "previous-secret"));
    long now = System.currentTimeMillis() / 1000;
    WebApplicationException e = assertThrows(WebApplicationException.class,
        () -> resource.receive(CallbackSignatures.header("a-third-secret", now, BODY), BODY));
    assertEquals(401, e.getResponse().getStatus());
  }
}
