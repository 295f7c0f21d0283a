package io.flashsale.api.core;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.MultivaluedMap;
import jakarta.ws.rs.ext.MessageBodyReader;
import jakarta.ws.rs.ext.Provider;
import java.io.IOException;
import java.io.InputStream;
import java.io.PushbackInputStream;
import java.lang.annotation.Annotation;
import java.lang.reflect.Type;

/**
 * Request bodies read as one JSON value with each key once: a duplicate key ({"amount":1,
 * "amount":2}) or data after the value ({"a":1}{"b":2}) is a JsonProcessingException, answered 400
 * MALFORMED_JSON ({@link ErrorMappers.MalformedJson}), so no body is read two ways by two readers.
 * An empty body is null, as the resources expect ("BODY_REQUIRED").
 */
@Provider
@Consumes({MediaType.APPLICATION_JSON, "application/*+json"})
public final class StrictJson implements MessageBodyReader<JsonNode> {
  /** The same rules for bodies a resource reads itself (the callback's raw bytes, which it must verify first). */
  public static final ObjectMapper MAPPER = new ObjectMapper()
      .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
      .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

  @Override
  public boolean isReadable(Class<?> type, Type genericType, Annotation[] annotations, MediaType mediaType) {
    return JsonNode.class.isAssignableFrom(type);
  }

  @Override
  public JsonNode readFrom(Class<JsonNode> type, Type genericType, Annotation[] annotations, MediaType mediaType,
      MultivaluedMap<String, String> httpHeaders, InputStream entityStream) throws IOException {
    PushbackInputStream in = new PushbackInputStream(entityStream, 1);
    int first = in.read();
    if (first < 0) return null;
    in.unread(first);
    return MAPPER.readTree(in);
  }
}
