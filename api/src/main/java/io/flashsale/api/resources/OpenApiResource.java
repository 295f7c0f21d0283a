package io.flashsale.api.resources;

import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * GET /openapi.json: the API's contract, the hand-written document in the repository
 * (api/src/main/resources/openapi.json) served as it is, so clients and fuzzers read exactly what
 * the tests check against the resources.
 */
@Path("/openapi.json")
public class OpenApiResource {
  public static final String RESOURCE = "openapi.json";
  private final byte[] document;

  public OpenApiResource() {
    this.document = load();
  }

  public static byte[] load() {
    try (InputStream in = OpenApiResource.class.getClassLoader().getResourceAsStream(RESOURCE)) {
      if (in == null) throw new IllegalStateException(RESOURCE + " missing from the classpath");
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @GET
  @Produces(MediaType.APPLICATION_JSON)
  public byte[] document() {
    return document;
  }
}
