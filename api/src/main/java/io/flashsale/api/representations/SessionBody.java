package io.flashsale.api.representations;

import com.fasterxml.jackson.annotation.JsonProperty;

/** A new session: the bearer token, and the CSRF token that cookie-authenticated unsafe requests must carry. */
public record SessionBody(String token, @JsonProperty("token_type") String tokenType,
    @JsonProperty("expires_in") long expiresIn, @JsonProperty("csrf_token") String csrfToken) {}
