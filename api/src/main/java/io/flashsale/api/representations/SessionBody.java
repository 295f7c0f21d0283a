package io.flashsale.api.representations;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * A new session: the bearer token, and the CSRF token that cookie-authenticated unsafe requests must
 * carry. {@code dev_login} says it came from dev login (any tenant/subject, no password): always
 * true, as that is the only login this service has.
 */
public record SessionBody(String token, @JsonProperty("token_type") String tokenType,
    @JsonProperty("expires_in") long expiresIn, @JsonProperty("csrf_token") String csrfToken,
    @JsonProperty("dev_login") boolean devLogin) {}
