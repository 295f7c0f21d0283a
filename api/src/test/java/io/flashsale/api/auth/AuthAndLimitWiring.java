package io.flashsale.api.auth;

import io.dropwizard.auth.AuthDynamicFeature;
import io.dropwizard.auth.AuthValueFactoryProvider;
import io.dropwizard.core.setup.Environment;
import io.flashsale.api.core.BodyLimit;
import io.flashsale.api.core.ErrorMappers;
import io.flashsale.api.core.ExactHeaders;

/**
 * The exact header cache, the token filter, the body limit and the error mappers as the service
 * registers them, for the HTTP tests' apps.
 */
final class AuthAndLimitWiring {
  private AuthAndLimitWiring() {}

  static void register(Environment env, TokenService tokens, long limit, Object resource) {
    ExactHeaders.install(env);
    env.jersey().register(new AuthDynamicFeature(new SessionAuthFilter.Builder(tokens)
        .setAuthenticator(tokens::verify).setPrefix("Bearer").setUnauthorizedHandler(new JsonUnauthorizedHandler())
        .buildAuthFilter()));
    env.jersey().register(new AuthValueFactoryProvider.Binder<>(Caller.class));
    env.jersey().register(new BodyLimit(limit));
    env.jersey().register(new io.flashsale.api.core.StrictJson());
    env.jersey().register(new io.flashsale.api.core.NoStore());
    env.jersey().register(new ErrorMappers.MalformedJson());
    env.jersey().register(new ErrorMappers.WebErrors());
    env.jersey().register(new ErrorMappers.Unexpected());
    env.jersey().register(resource);
  }
}
