package io.flashsale.api.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.dropwizard.core.Application;
import io.dropwizard.core.Configuration;
import io.dropwizard.core.setup.Environment;
import io.dropwizard.testing.junit5.DropwizardAppExtension;
import io.dropwizard.testing.junit5.DropwizardExtensionsSupport;
import io.flashsale.api.LoopbackConfig;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Requests Jetty refuses before Jersey sees them, sent as raw bytes (an HTTP client would refuse
 * to send most of them): each gets a 400 whose body is the service's JSON error, never an empty
 * body or an HTML page, and no resource runs.
 */
@ExtendWith(DropwizardExtensionsSupport.class)
class JsonErrorHandlerHttpTest {
  static final AtomicInteger CALLS = new AtomicInteger();
  private static final ObjectMapper JSON = new ObjectMapper();

  public static final class TestApp extends Application<Configuration> {
    @Override
    public void run(Configuration cfg, Environment env) {
      env.jersey().register(new ErrorMappers.WebErrors());
      env.jersey().register(new Orders());
      JsonErrorHandler.install(env);
    }
  }

  @Path("/orders")
  @Produces(MediaType.APPLICATION_JSON)
  public static final class Orders {
    @GET
    @Path("{id}")
    public Map<String, Object> get(@PathParam("id") String id) {
      CALLS.incrementAndGet();
      return Map.of("order_id", id);
    }
  }

  static final DropwizardAppExtension<Configuration> APP = new DropwizardAppExtension<>(TestApp.class, LoopbackConfig.create());

  /** Status line, headers and body of one request written byte for byte. */
  private record Raw(int status, String head, String body) {}

  private static Raw send(String target) throws Exception {
    try (Socket socket = new Socket("127.0.0.1", APP.getLocalPort())) {
      socket.setSoTimeout(10_000);
      OutputStream out = socket.getOutputStream();
      out.write(("GET " + target + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
          .getBytes(StandardCharsets.ISO_8859_1));
      out.flush();
      ByteArrayOutputStream all = new ByteArrayOutputStream();
      InputStream in = socket.getInputStream();
      in.transferTo(all);
      String text = all.toString(StandardCharsets.UTF_8);
      int split = text.indexOf("\r\n\r\n");
      String head = text.substring(0, split);
      return new Raw(Integer.parseInt(head.split(" ")[1]), head, text.substring(split + 4));
    }
  }

  @Test
  void aGoodPathReachesTheResource() throws Exception {
    Raw r = send("/orders/ord-0001");
    assertEquals(200, r.status(), r.head());
    assertEquals("ord-0001", JSON.readTree(r.body()).path("order_id").asText());
  }

  @ParameterizedTest
  @ValueSource(strings = {"/orders/%25", "/orders/a%25b", "/orders/%zz", "/orders/%2F", "/orders/a\u0001b", "/orders/%00"})
  void jettysOwnRefusalIsTheServicesJsonError(String target) throws Exception {
    int before = CALLS.get();
    Raw r = send(target);
    assertEquals(400, r.status(), r.head());
    assertTrue(r.head().toLowerCase().contains("content-type: application/problem+json"), r.head());
    JsonNode body = JSON.readTree(r.body());
    assertEquals("BAD_REQUEST", body.path("code").asText(), "body: " + r.body());
    assertEquals("BAD_REQUEST", body.path("error").asText(), "body: " + r.body());
    assertEquals("https://flashsale.dev/problems/bad-request", body.path("type").asText(), "body: " + r.body());
    assertEquals("Bad Request", body.path("title").asText(), "body: " + r.body());
    assertEquals(400, body.path("status").asInt(), "body: " + r.body());
    assertEquals("Bad Request", body.path("detail").asText(), "body: " + r.body());
    assertFalse(body.has("message"), "body: " + r.body());
    assertEquals(before, CALLS.get(), "no resource ran");
  }
}
