package io.flashsale.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.dropwizard.configuration.DefaultConfigurationFactoryFactory;
import io.dropwizard.configuration.FileConfigurationSourceProvider;
import io.dropwizard.configuration.SubstitutingSourceProvider;
import io.dropwizard.jackson.Jackson;
import io.dropwizard.validation.BaseValidator;
import io.flashsale.workflows.OrderWorkflow;
import java.io.IOException;
import java.io.Reader;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.commons.text.StringSubstitutor;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * docker/compose.yaml cannot be started on the machines this project is built on (no Docker
 * engine), so this checks what can be checked from the files alone: the compose file against
 * docker/README.md, docker/.env.example, docker/Dockerfile, the search attributes the order
 * workflow upserts, and launcher/src/main/resources/production.example.yml, which the app containers
 * mount as their configuration.
 */
class ComposeFileTest {
  private static final Path DOCKER = Path.of("..", "docker").toAbsolutePath().normalize();
  private static final Path COMPOSE = DOCKER.resolve("compose.yaml");
  private static final Path README = DOCKER.resolve("README.md");
  private static final Path ENV_EXAMPLE = DOCKER.resolve(".env.example");
  private static final Path DOCKERFILE = DOCKER.resolve("Dockerfile");
  private static final Path PRODUCTION = Path.of("src", "main", "resources", "production.example.yml")
      .toAbsolutePath().normalize();

  /** ${NAME}, ${NAME:-default}, ${NAME-default}, ${NAME:?error}, ${NAME?error}, and the $$ escape. */
  private static final Pattern COMPOSE_VAR =
      Pattern.compile("\\$\\$|\\$\\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?}");
  /** What Dropwizard's substitutor replaces in the configuration: ${NAME} and ${NAME:-default}. */
  private static final Pattern CONFIG_VAR = Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?}");
  private static final Set<String> REQUIRED_SERVICES = Set.of("postgresql", "temporal-schema", "temporal", "temporal-setup",
      "temporal-ui", "channel-stub", "api", "worker-1", "worker-2");

  private static Map<String, Object> services;
  private static Map<String, Object> production;
  private static String productionText;
  private static Map<String, String> envExample;

  @BeforeAll
  static void load() throws IOException {
    Map<String, Object> compose = map(yaml(COMPOSE), "compose.yaml");
    services = map(compose.get("services"), "services");
    productionText = Files.readString(PRODUCTION);
    production = map(yaml(PRODUCTION), "production.example.yml");
    envExample = new LinkedHashMap<>();
    for (String line : Files.readAllLines(ENV_EXAMPLE)) {
      String l = line.strip();
      if (l.isEmpty() || l.startsWith("#")) continue;
      int eq = l.indexOf('=');
      assertTrue(eq > 0, ".env.example: not NAME=value: " + line);
      envExample.put(l.substring(0, eq).strip(), unquote(l.substring(eq + 1).strip()));
    }
  }

  @Test
  void readmeServiceTableNamesExactlyTheComposeServices() throws IOException {
    Set<String> documented = readmeServices();
    assertTrue(documented.containsAll(REQUIRED_SERVICES), "README service table lacks some of " + REQUIRED_SERVICES);
    for (String name : documented) {
      assertTrue(services.containsKey(name), "README names service '" + name + "', compose.yaml has none");
    }
    assertEquals(new TreeSet<>(documented), new TreeSet<>(services.keySet()),
        "the README service table and compose.yaml name different services");
  }

  @Test
  void readmeImagesMatchTheComposeImages() throws IOException {
    for (Map.Entry<String, String> row : readmeServiceImages().entrySet()) {
      assertEquals(image(row.getKey()), row.getValue(), "README image of " + row.getKey());
    }
  }

  @Test
  void everyImageHasAPinnedTag() throws IOException {
    for (String name : services.keySet()) {
      assertPinned("service " + name, image(name));
    }
    List<String> from = dockerfileFromImages();
    assertTrue(from.size() >= 2, "Dockerfile: a build stage and a runtime stage, found " + from);
    for (String ref : from) {
      assertPinned("Dockerfile FROM", ref);
    }
    assertTrue(from.get(0).startsWith("maven:3.9") && from.get(0).contains("eclipse-temurin-17"),
        "build stage: maven 3.9 with Temurin 17, found " + from.get(0));
    String runtime = from.get(from.size() - 1);
    assertTrue(runtime.startsWith("eclipse-temurin:17") && runtime.contains("jre"),
        "runtime stage: the Temurin 17 JRE, found " + runtime);
  }

  @Test
  void appImageIsBuiltFromTheDockerfileAndRunsTheApplication() throws IOException {
    String dockerfile = Files.readString(DOCKERFILE);
    assertTrue(dockerfile.contains("mvn -B -DskipTests install"), "Dockerfile: builds with mvn -B -DskipTests install");
    for (String name : appServices()) {
      Map<String, Object> build = map(service(name).get("build"), name + ".build");
      Path context = DOCKER.resolve(String.valueOf(build.get("context"))).normalize();
      assertEquals(DOCKER.getParent(), context, name + ": the build context is the repository root");
      assertEquals(DOCKERFILE, context.resolve(String.valueOf(build.get("dockerfile"))).normalize(),
          name + ": built from docker/Dockerfile");
    }
    // the entrypoint the Dockerfile installs starts the application's main class
    Matcher copy = Pattern.compile("(?m)^COPY\\s+(docker/\\S+)\\s+(\\S+)\\s*$").matcher(dockerfile);
    Matcher entry = Pattern.compile("(?m)^ENTRYPOINT\\s*\\[\\s*\"([^\"]+)\"").matcher(dockerfile);
    assertTrue(entry.find(), "Dockerfile: an exec-form ENTRYPOINT");
    Path entrypointSource = null;
    while (copy.find()) {
      if (copy.group(2).equals(entry.group(1))) entrypointSource = DOCKER.getParent().resolve(copy.group(1));
    }
    assertNotNull(entrypointSource, "Dockerfile: the ENTRYPOINT " + entry.group(1) + " is copied from docker/");
    assertTrue(Files.readString(entrypointSource).contains(FlashsaleApplication.class.getName()),
        entrypointSource + " runs " + FlashsaleApplication.class.getName());
  }

  @Test
  void temporalPostgresqlAndUiImagesAreThere() {
    ImageRef postgres = ImageRef.parse(image("postgresql"));
    assertEquals("postgres", postgres.repository());
    assertTrue(major(postgres.tag()) >= 12, "the postgres12 driver needs PostgreSQL 12 or later: " + postgres);

    ImageRef temporal = ImageRef.parse(image("temporal"));
    assertEquals("temporalio/server", temporal.repository(),
        "the plain server image with the configuration files ./flashsale cluster reads too, not auto-setup");
    Map<String, String> temporalEnv = environment("temporal");
    String dbHost = temporalEnv.get("TEMPORAL_DB_HOST");
    assertTrue(services.containsKey(dbHost), "TEMPORAL_DB_HOST names a compose service: " + dbHost);
    assertEquals("postgres", ImageRef.parse(image(dbHost)).repository(), "Temporal's database is PostgreSQL");
    assertTrue(containerPorts(dbHost).contains(Integer.parseInt(temporalEnv.get("TEMPORAL_DB_PORT"))),
        dbHost + " exposes TEMPORAL_DB_PORT");
    // the schemas first (a one-shot on a healthy PostgreSQL), then the server
    assertDependsOn("temporal-schema", dbHost, "service_healthy");
    assertDependsOn("temporal", "temporal-schema", "service_completed_successfully");
    assertEquals(databaseSettings(temporalEnv), databaseSettings(environment("temporal-schema")),
        "temporal-schema reaches the database as the server does (TEMPORAL_DB_*)");
    ImageRef schema = ImageRef.parse(image("temporal-schema"));
    assertEquals("temporalio/admin-tools", schema.repository());
    assertTrue(schema.tag().startsWith(temporal.tag()), "the SQL tool of the server's release: " + schema);

    ImageRef setup = ImageRef.parse(image("temporal-setup"));
    assertEquals("temporalio/admin-tools", setup.repository());
    assertTrue(setup.tag().startsWith(temporal.tag()),
        "admin-tools of the same Temporal release as the server: " + setup + " vs " + temporal);

    ImageRef ui = ImageRef.parse(image("temporal-ui"));
    assertEquals("temporalio/ui", ui.repository());
    assertEquals(config("temporal", "target"), environment("temporal-ui").get("TEMPORAL_ADDRESS"),
        "the UI talks to the Temporal frontend the app uses");
    assertTrue(containerPorts("temporal-ui").contains(8080), "the UI listens on 8080 in its container");
    // the operator's path around the callback signature is not open to the host
    assertTrue(published("temporal").isEmpty(), "the Temporal frontend (no credentials here) is not published");
    assertEquals("true", interpolate(environment("temporal-ui").get("TEMPORAL_DISABLE_WRITE_ACTIONS"), Map.of()),
        "the Web UI's write actions are off unless configured");
  }

  @Test
  void searchAttributeSetupRegistersWhatTheWorkflowUpserts() throws IOException {
    String setup = setupText("temporal-setup");
    assertTrue(setup.contains("temporal operator search-attribute create"), "uses temporal operator search-attribute create");
    Set<String> attributes = new LinkedHashSet<>();
    for (var key : List.of(OrderWorkflow.ORDER_ID, OrderWorkflow.ORDER_STATUS, OrderWorkflow.SKU,
        OrderWorkflow.TENANT, OrderWorkflow.ORDER_ATTENTION, io.flashsale.workflows.ReconcileWorkflow.OUTCOME)) {
      attributes.add(key.getName());
    }
    assertEquals(Set.of("OrderId", "OrderStatus", "Sku", "Tenant", "OrderAttention", "ReconcileOutcome"), attributes);
    assertEquals(new LinkedHashSet<>(TemporalRuntime.SEARCH_ATTRIBUTES), attributes,
        "the service registers the same search attributes as temporal-setup");
    for (String attribute : attributes) {
      Pattern keyword = Pattern.compile("(?m)^.*\\b" + Pattern.quote(attribute) + "\\b.*\\bKeyword\\b.*$");
      assertTrue(keyword.matcher(setup).find(), "temporal-setup registers " + attribute + " as Keyword");
    }
    assertEquals(config("temporal", "namespace"), environment("temporal-setup").get("TEMPORAL_NAMESPACE"),
        "search attributes go to the namespace the app uses");
    assertEquals(config("temporal", "target"), environment("temporal-setup").get("TEMPORAL_ADDRESS"));
    assertDependsOn("temporal-setup", "temporal", "service_healthy");
    for (String name : appServicesRunning("server", "worker")) {
      assertDependsOn(name, "temporal-setup", "service_completed_successfully");
    }
  }

  @Test
  void apiPublishesTheConfiguredPortAndKeepsAdminInside() {
    Map<String, Object> server = map(production.get("server"), "server");
    Map<String, Object> app = map(list(server.get("applicationConnectors"), "applicationConnectors").get(0), "app");
    Map<String, Object> admin = map(list(server.get("adminConnectors"), "adminConnectors").get(0), "admin");
    int appPort = ((Number) app.get("port")).intValue();
    int adminPort = ((Number) admin.get("port")).intValue();
    assertEquals("127.0.0.1", admin.get("bindHost"), "admin connector on loopback only");

    List<PortMapping> ports = published("api");
    assertTrue(ports.stream().anyMatch(p -> p.container() == appPort && p.host() == appPort),
        "api publishes the application port " + appPort + ": " + ports);
    assertTrue(ports.stream().noneMatch(p -> p.container() == adminPort), "api must not publish admin " + adminPort);
    assertEquals(List.of(appPort), ports.stream().map(PortMapping::container).distinct().toList(),
        "api publishes the application port only");

    String health = String.join(" ", command(map(service("api").get("healthcheck"), "healthcheck").get("test")));
    assertTrue(health.contains("http://127.0.0.1:" + adminPort + "/healthcheck"),
        "api health check asks the admin connector inside the container: " + health);

    URI notify = URI.create(config("channel", "notifyUrl"));
    assertEquals("api", notify.getHost(), "the channel posts callbacks to the api service");
    assertEquals(appPort, notify.getPort());
  }

  /**
   * The database's roles keep the passwords the first start gives them: the init script (run by the
   * postgres image, being executable) refuses .env.example's placeholders and short ones before it
   * creates anything. Run here as the image runs it, with a psql that only says it was called.
   */
  @Test
  void theDatabaseInitRefusesPlaceholderPasswords() throws Exception {
    Path bin = Files.createTempDirectory("fake-psql");
    Path psql = bin.resolve("psql");
    Files.writeString(psql, "#!/bin/sh\necho psql-called\n");
    psql.toFile().setExecutable(true);
    String good = "0123456789abcdef0123456789abcdef";
    String refused = initDatabase(bin, envExample.get("POSTGRES_PASSWORD"), envExample.get("FLASHSALE_DB_PASSWORD"),
        envExample.get("TEMPORAL_DB_PASSWORD"));
    assertTrue(refused.startsWith("exit 1") && refused.contains("POSTGRES_PASSWORD is a placeholder")
        && !refused.contains("psql-called"), "the example's passwords create no role: " + refused);
    String shortOne = initDatabase(bin, good, "short", good);
    assertTrue(shortOne.startsWith("exit 1") && shortOne.contains("FLASHSALE_DB_PASSWORD is shorter"), shortOne);
    String created = initDatabase(bin, good, good + "1", good + "2");
    assertTrue(created.startsWith("exit 0") && created.contains("psql-called"), created);
  }

  private static String initDatabase(Path fakeBin, String postgres, String flashsale, String temporal) throws Exception {
    Path script = DOCKER.resolve("postgres-init.sh");
    assertTrue(Files.isExecutable(script), "executable: the image runs it rather than sourcing it");
    ProcessBuilder pb = new ProcessBuilder(script.toString()).redirectErrorStream(true);
    pb.environment().put("PATH", fakeBin + ":" + System.getenv("PATH"));
    pb.environment().put("POSTGRES_USER", "postgres");
    pb.environment().put("POSTGRES_PASSWORD", postgres);
    pb.environment().put("FLASHSALE_DB_PASSWORD", flashsale);
    pb.environment().put("TEMPORAL_DB_PASSWORD", temporal);
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    return "exit " + p.waitFor() + ": " + out;
  }

  @Test
  void everyConfigurationVariableIsProvidedToTheAppContainers() {
    Map<String, Boolean> variables = new LinkedHashMap<>(); // name -> has a default in the config
    Matcher m = CONFIG_VAR.matcher(productionText);
    while (m.find()) variables.merge(m.group(1), m.group(2) != null, Boolean::logicalAnd);
    assertTrue(variables.keySet().containsAll(
        Set.of("FLASHSALE_DB_PASSWORD", "FLASHSALE_TOKEN_SECRET", "FLASHSALE_CALLBACK_SECRET",
            "FLASHSALE_CHANNEL_MERCHANT_KEY", "FLASHSALE_DELIVERY_SECRET")),
        "production.example.yml takes its secrets from the environment: " + variables.keySet());
    assertFalse(productionText.contains("change-me"), "no placeholder secret in production.example.yml");

    List<String> apps = appServicesRunning("server", "worker");
    assertTrue(apps.containsAll(List.of("api", "worker-1", "worker-2")), "app services: " + apps);
    for (String name : apps) {
      Map<String, String> env = environment(name);
      for (Map.Entry<String, Boolean> v : variables.entrySet()) {
        String value = env.get(v.getKey());
        assertNotNull(value, name + " does not provide " + v.getKey() + " (used in production.example.yml)");
        if (!v.getValue()) {
          // a secret: no default in the config, none in compose either, and listed in .env.example
          assertNoComposeDefault(name + "." + v.getKey(), value);
          assertTrue(envExample.containsKey(v.getKey()), ".env.example lists " + v.getKey());
        }
      }
    }
  }

  @Test
  void everyComposeVariableWithoutADefaultIsListedInEnvExample() throws IOException {
    Matcher m = COMPOSE_VAR.matcher(Files.readString(COMPOSE));
    Set<String> required = new TreeSet<>();
    while (m.find()) {
      if (m.group(1) != null && (m.group(2) == null || m.group(2).contains("?"))) required.add(m.group(1));
    }
    assertFalse(required.isEmpty());
    for (String name : required) {
      assertTrue(envExample.containsKey(name), ".env.example lists " + name);
    }
  }

  @Test
  void configurationHostsAreComposeServices() throws IOException {
    String[] target = config("temporal", "target").split(":");
    assertEquals(2, target.length, "temporal.target is host:port");
    assertTrue(services.containsKey(target[0]), "temporal.target host is a compose service: " + target[0]);
    assertTrue(containerPorts(target[0]).contains(Integer.parseInt(target[1])),
        target[0] + " exposes " + target[1]);
    assertEquals(target[1], environment("temporal").get("TEMPORAL_FRONTEND_PORT"), "the frontend listens on temporal.target's port");

    String url = config("database", "url");
    assertTrue(url.startsWith("jdbc:postgresql://"), url);
    URI db = URI.create(url.substring("jdbc:".length()));
    assertTrue(services.containsKey(db.getHost()), "database url host is a compose service: " + db.getHost());
    assertTrue(containerPorts(db.getHost()).contains(db.getPort()), db.getHost() + " exposes " + db.getPort());
    assertTrue(ImageRef.parse(image(db.getHost())).repository().equals("postgres"), "the database is PostgreSQL");
    // the role and database the app uses are the ones the first start creates
    String init = setupText(db.getHost());
    String user = config("database", "user");
    String database = db.getPath().substring(1);
    assertTrue(Pattern.compile("CREATE ROLE " + Pattern.quote(user) + "\\b").matcher(init).find(),
        "postgres init creates role " + user);
    assertTrue(Pattern.compile("CREATE DATABASE " + Pattern.quote(database) + " OWNER " + Pattern.quote(user) + "\\b")
        .matcher(init).find(), "postgres init creates database " + database + " owned by " + user);
    assertEquals(environment("temporal").get("TEMPORAL_DB_USER"),
        matchOrFail(init, "CREATE DATABASE temporal OWNER (\\w+)"), "Temporal's databases belong to its role");

    assertEquals("${FLASHSALE_CHANNEL_URL}", config("channel", "baseUrl"),
        "the channel is the operator's: its URL comes from the environment");
    URI demoChannel = URI.create(envExample.get("FLASHSALE_CHANNEL_URL"));
    assertTrue(services.containsKey(demoChannel.getHost()), ".env.example's channel is the demo profile's service");
    List<String> stub = command(service(demoChannel.getHost()).get("command"));
    assertEquals("channel", stub.get(0), demoChannel.getHost() + " runs the channel stub");
    assertEquals(String.valueOf(demoChannel.getPort()), argument(stub, "--port"), "stub port");
    assertEquals("0.0.0.0", argument(stub, "--host"), "the stub must listen beyond its container's loopback");
    assertEquals(config("channel", "notifyUrl"), argument(stub, "--notify-url"),
        "the stub calls back only the API's notify URL");
  }

  /** The production shape runs no stub; the demo profile adds it, and no secret is on a command line. */
  @Test
  void theChannelStubIsADemoAndNoSecretIsOnACommandLine() {
    assertEquals(List.of("demo"), service("channel-stub").get("profiles"), "the stub runs only in the demo profile");
    assertFalse(published("channel-stub").stream().findAny().isPresent(), "the stub publishes no port");
    for (String name : services.keySet()) {
      String cmd = String.join(" ", command(service(name).get("command")));
      assertFalse(cmd.contains("SECRET") || cmd.contains("KEY") || cmd.contains("PASSWORD") || cmd.contains("--secret"),
          name + " passes a secret on its command line: " + cmd);
      assertFalse(dependsOn(name).containsKey("channel-stub"),
          name + " depends on the demo's stub, so the production shape would need it");
    }
    Map<String, String> stubEnv = environment("channel-stub");
    for (String secret : List.of("FLASHSALE_CALLBACK_SECRET", "FLASHSALE_CHANNEL_MERCHANT_KEY")) {
      assertNotNull(stubEnv.get(secret), "the stub reads " + secret + " from its environment");
      assertNoComposeDefault("channel-stub." + secret, stubEnv.get(secret));
    }
  }

  @Test
  void twoWorkersRunTheWorkerCommandWithTheProductionConfiguration() {
    List<String> workers = appServicesRunning("worker");
    assertTrue(workers.size() >= 2, "at least two worker services: " + workers);
    assertTrue(workers.containsAll(List.of("worker-1", "worker-2")), workers.toString());
    assertEquals(List.of("api"), appServicesRunning("server"), "one api service runs `server`");
    for (String name : appServicesRunning("server", "worker")) {
      List<String> cmd = command(service(name).get("command"));
      assertEquals(2, cmd.size(), name + ": command and config file: " + cmd);
      assertEquals(PRODUCTION, mountSource(name, cmd.get(1)),
          name + " mounts production.example.yml at " + cmd.get(1));
      assertFalse(service(name).containsKey("container_name"), name + " has a fixed container name");
    }
    for (String worker : workers) {
      assertTrue(published(worker).isEmpty(), worker + " publishes no port (so --scale works)");
      assertDependsOn(worker, "api", "service_healthy"); // the API has migrated the schema
    }
  }

  @Test
  void productionConfigurationLoadsWithTheComposeEnvironment() throws Exception {
    for (String name : appServicesRunning("server", "worker")) {
      Map<String, String> env = new LinkedHashMap<>();
      environment(name).forEach((k, v) -> env.put(k, interpolate(v, envExample)));
      StringSubstitutor substitutor = new StringSubstitutor(env);
      substitutor.setEnableUndefinedVariableException(true);
      // the factory the application uses: unknown keys fail, as they would at start
      FlashsaleConfiguration cfg = new DefaultConfigurationFactoryFactory<FlashsaleConfiguration>()
          .create(FlashsaleConfiguration.class, BaseValidator.newValidator(), Jackson.newObjectMapper(), "dw")
          .build(new SubstitutingSourceProvider(new FileConfigurationSourceProvider(), substitutor), PRODUCTION.toString());
      assertFalse(cfg.embedded, "embedded: false");
      assertFalse(cfg.worker, "the api runs no worker (worker: false)");
      assertFalse(cfg.seed.enabled);
      assertFalse(cfg.auth.devLogin, "dev login off unless FLASHSALE_DEV_LOGIN=true");
      assertEquals(envExample.get("FLASHSALE_DB_PASSWORD"), cfg.database.password);
      assertEquals(envExample.get("FLASHSALE_TOKEN_SECRET"), cfg.auth.secret);
      assertEquals(envExample.get("FLASHSALE_CALLBACK_SECRET"), cfg.channel.callbackSecret);
      assertEquals(envExample.get("FLASHSALE_CHANNEL_MERCHANT_KEY"), cfg.channel.merchantKey);
      assertEquals(envExample.get("FLASHSALE_DELIVERY_SECRET"), cfg.consumer.deliverySecret);
      FlashsaleConfiguration.TlsSettings tls = cfg.temporal.tls.effective();
      assertTrue(tls.enabled && tls.clientCertFile.equals("/etc/flashsale/tls/service.pem")
          && tls.caCertFile.equals("/etc/flashsale/tls/ca.pem") && tls.serverName.equals("temporal"),
          "the frontend's mutual TLS: the service's certificate from the mounted folder");
      assertNotNull(cfg.channel.baseUrl, "a worker needs channel.baseUrl");
      assertFalse(cfg.channel.notifyUrl.isBlank(), "a worker needs channel.notifyUrl");
    }
  }

  @Test
  void dependenciesAreServicesWithHealthChecksWhereWaitedFor() {
    Set<String> conditions = Set.of("service_started", "service_healthy", "service_completed_successfully");
    for (String name : services.keySet()) {
      for (Map.Entry<String, String> dep : dependsOn(name).entrySet()) {
        assertTrue(services.containsKey(dep.getKey()), name + " depends on unknown " + dep.getKey());
        assertTrue(conditions.contains(dep.getValue()), name + ": condition " + dep.getValue());
        if (dep.getValue().equals("service_healthy")) {
          assertTrue(service(dep.getKey()).containsKey("healthcheck"),
              name + " waits for " + dep.getKey() + " to be healthy, which has no healthcheck");
        }
        if (dep.getValue().equals("service_completed_successfully")) {
          assertEquals("no", String.valueOf(service(dep.getKey()).getOrDefault("restart", "no")),
              dep.getKey() + " is a one-shot");
        }
      }
    }
  }

  // ---- helpers ----

  private static Object yaml(Path file) throws IOException {
    try (Reader in = Files.newBufferedReader(file)) {
      return new Yaml(new SafeConstructor(new LoaderOptions())).load(in);
    }
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object o, String what) {
    if (!(o instanceof Map)) fail(what + " is not a mapping: " + o);
    return (Map<String, Object>) o;
  }

  @SuppressWarnings("unchecked")
  private static List<Object> list(Object o, String what) {
    if (!(o instanceof List)) fail(what + " is not a list: " + o);
    return (List<Object>) o;
  }

  private static String unquote(String s) {
    if (s.length() >= 2 && (s.startsWith("\"") && s.endsWith("\"") || s.startsWith("'") && s.endsWith("'"))) {
      return s.substring(1, s.length() - 1);
    }
    return s;
  }

  private static Map<String, Object> service(String name) {
    assertTrue(services.containsKey(name), "compose.yaml has no service " + name);
    return map(services.get(name), name);
  }

  private static String image(String name) {
    Object image = service(name).get("image");
    assertNotNull(image, name + " names no image");
    return String.valueOf(image);
  }

  private static String config(String section, String key) {
    Object value = map(production.get(section), section).get(key);
    assertNotNull(value, "production.example.yml: " + section + "." + key);
    return String.valueOf(value);
  }

  private static List<String> command(Object cmd) {
    if (cmd == null) return List.of();
    if (cmd instanceof List<?> l) return l.stream().map(String::valueOf).toList();
    return Arrays.asList(String.valueOf(cmd).trim().split("\\s+"));
  }

  private static String argument(List<String> cmd, String flag) {
    int i = cmd.indexOf(flag);
    return i >= 0 && i + 1 < cmd.size() ? cmd.get(i + 1) : null;
  }

  /** Services built from docker/Dockerfile. */
  private static List<String> appServices() {
    return services.keySet().stream().filter(n -> service(n).containsKey("build")).toList();
  }

  /** App services whose command starts with one of the given subcommands, in file order. */
  private static List<String> appServicesRunning(String... subcommands) {
    Set<String> wanted = Set.of(subcommands);
    return services.keySet().stream()
        .filter(n -> {
          List<String> cmd = command(service(n).get("command"));
          return !cmd.isEmpty() && wanted.contains(cmd.get(0)) && service(n).containsKey("build");
        })
        .toList();
  }

  private static Map<String, String> environment(String name) {
    Object env = service(name).get("environment");
    Map<String, String> out = new LinkedHashMap<>();
    if (env instanceof Map<?, ?> m) {
      m.forEach((k, v) -> out.put(String.valueOf(k), v == null ? null : String.valueOf(v)));
    } else if (env instanceof List<?> l) {
      for (Object item : l) {
        String s = String.valueOf(item);
        int eq = s.indexOf('=');
        out.put(eq < 0 ? s : s.substring(0, eq), eq < 0 ? null : s.substring(eq + 1));
      }
    }
    return out;
  }

  private static Map<String, String> dependsOn(String name) {
    Object deps = service(name).get("depends_on");
    Map<String, String> out = new LinkedHashMap<>();
    if (deps instanceof List<?> l) {
      l.forEach(d -> out.put(String.valueOf(d), "service_started"));
    } else if (deps instanceof Map<?, ?> m) {
      m.forEach((k, v) -> out.put(String.valueOf(k),
          v instanceof Map<?, ?> c && c.get("condition") != null ? String.valueOf(c.get("condition")) : "service_started"));
    }
    return out;
  }

  /** The TEMPORAL_DB_* variables of a service's environment. */
  private static Map<String, String> databaseSettings(Map<String, String> env) {
    Map<String, String> out = new LinkedHashMap<>(env);
    out.keySet().removeIf(k -> !k.startsWith("TEMPORAL_DB_"));
    return out;
  }

  private static void assertDependsOn(String name, String dependency, String condition) {
    assertEquals(condition, dependsOn(name).get(dependency), name + " depends on " + dependency + " (" + condition + ")");
  }

  record PortMapping(int host, int container) {}

  /** The service's published ports (short syntax "[ip:]host:container[/proto]" or long syntax). */
  private static List<PortMapping> published(String name) {
    List<PortMapping> out = new ArrayList<>();
    Object ports = service(name).get("ports");
    if (ports == null) return out;
    for (Object p : list(ports, name + ".ports")) {
      if (p instanceof Map<?, ?> m) {
        out.add(new PortMapping(Integer.parseInt(String.valueOf(m.get("published"))),
            Integer.parseInt(String.valueOf(m.get("target")))));
        continue;
      }
      assertTrue(p instanceof String, name + ": quote port mappings (YAML reads 8080:8080 as a number): " + p);
      String[] parts = ((String) p).replaceAll("/(tcp|udp)$", "").split(":");
      assertTrue(parts.length == 2 || parts.length == 3, name + ": host and container port in " + p);
      out.add(new PortMapping(Integer.parseInt(parts[parts.length - 2]), Integer.parseInt(parts[parts.length - 1])));
    }
    return out;
  }

  /** Ports the service listens on inside the compose network: `expose` and published container ports. */
  private static Set<Integer> containerPorts(String name) {
    Set<Integer> out = new TreeSet<>();
    published(name).forEach(p -> out.add(p.container()));
    Object expose = service(name).get("expose");
    if (expose != null) {
      list(expose, name + ".expose").forEach(e -> out.add(Integer.parseInt(String.valueOf(e).replaceAll("/(tcp|udp)$", ""))));
    }
    return out;
  }

  /** Host file bind-mounted at the given container path, resolved against docker/. */
  private static Path mountSource(String name, String containerPath) {
    for (Map.Entry<String, Path> mount : bindMounts(name).entrySet()) {
      if (mount.getKey().equals(containerPath)) return mount.getValue();
    }
    fail(name + " mounts nothing at " + containerPath);
    return null;
  }

  private static Map<String, Path> bindMounts(String name) {
    Map<String, Path> out = new LinkedHashMap<>();
    Object volumes = service(name).get("volumes");
    if (volumes == null) return out;
    for (Object v : list(volumes, name + ".volumes")) {
      String source;
      String target;
      if (v instanceof Map<?, ?> m) {
        source = String.valueOf(m.get("source"));
        target = String.valueOf(m.get("target"));
      } else {
        String[] parts = String.valueOf(v).split(":");
        source = parts[0];
        target = parts.length > 1 ? parts[1] : parts[0];
      }
      if (source.startsWith(".") || source.startsWith("/")) out.put(target, DOCKER.resolve(source).normalize());
    }
    return out;
  }

  /** Entrypoint, command and the text of every file from the repository the service mounts. */
  private static String setupText(String name) throws IOException {
    StringBuilder sb = new StringBuilder();
    sb.append(String.join(" ", command(service(name).get("entrypoint")))).append('\n');
    sb.append(String.join(" ", command(service(name).get("command")))).append('\n');
    for (Path source : bindMounts(name).values()) {
      if (Files.isRegularFile(source)) sb.append(Files.readString(source)).append('\n');
    }
    return sb.toString();
  }

  private static String matchOrFail(String text, String regex) {
    Matcher m = Pattern.compile(regex).matcher(text);
    assertTrue(m.find(), "no match for " + regex);
    return m.group(1);
  }

  private static void assertNoComposeDefault(String what, String value) {
    Matcher m = COMPOSE_VAR.matcher(value);
    while (m.find()) {
      if (m.group(2) != null) {
        assertTrue(m.group(2).contains("?"), what + " must not have a default: " + value);
      }
    }
    assertTrue(value.contains("${"), what + " comes from the environment, not the file: " + value);
  }

  /** Compose's interpolation of ${...} with the given variables (enough for this file; no nesting). */
  static String interpolate(String value, Map<String, String> vars) {
    if (value == null) return null;
    Matcher m = COMPOSE_VAR.matcher(value);
    StringBuilder sb = new StringBuilder();
    while (m.find()) {
      String replacement;
      if (m.group(1) == null) {
        replacement = "$";
      } else {
        String v = vars.get(m.group(1));
        String op = m.group(2);
        boolean unsetOrEmpty = v == null || v.isEmpty();
        if (op == null) {
          replacement = v == null ? "" : v;
        } else if (op.equals(":-")) {
          replacement = unsetOrEmpty ? m.group(3) : v;
        } else if (op.equals("-")) {
          replacement = v == null ? m.group(3) : v;
        } else if (op.equals(":?") && unsetOrEmpty || op.equals("?") && v == null) {
          throw new AssertionError("required variable " + m.group(1) + " is not set: " + m.group(3));
        } else {
          replacement = v;
        }
      }
      m.appendReplacement(sb, Matcher.quoteReplacement(replacement));
    }
    m.appendTail(sb);
    return sb.toString();
  }

  @Test
  void interpolationFollowsCompose() {
    Map<String, String> vars = Map.of("A", "a", "E", "");
    assertEquals("a", interpolate("${A}", vars));
    assertEquals("d", interpolate("${E:-d}", vars));
    assertEquals("", interpolate("${E-d}", vars));
    assertEquals("d", interpolate("${U-d}", vars));
    assertEquals("$x a", interpolate("$$x ${A:?need A}", vars));
    try {
      interpolate("${U:?need U}", vars);
      fail("an unset required variable must fail");
    } catch (AssertionError expected) {
      assertTrue(expected.getMessage().contains("need U"));
    }
  }

  /** First cells of the README table whose header starts with "service". */
  private static Set<String> readmeServices() throws IOException {
    return readmeServiceRows().stream().map(r -> r.get(0)).collect(Collectors.toCollection(LinkedHashSet::new));
  }

  /** Service -> image, from the README table's "image" column. */
  private static Map<String, String> readmeServiceImages() throws IOException {
    Map<String, String> out = new LinkedHashMap<>();
    for (List<String> row : readmeServiceRows()) out.put(row.get(0), row.get(1));
    return out;
  }

  private static List<List<String>> readmeServiceRows() throws IOException {
    List<String> lines = Files.readAllLines(README);
    List<List<String>> rows = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      List<String> header = cells(lines.get(i));
      if (header.size() < 2 || !header.get(0).equalsIgnoreCase("service") || !header.get(1).equalsIgnoreCase("image")) {
        continue;
      }
      for (int j = i + 2; j < lines.size() && lines.get(j).strip().startsWith("|"); j++) {
        rows.add(cells(lines.get(j)));
      }
      break;
    }
    assertFalse(rows.isEmpty(), "docker/README.md has no table with the columns | service | image | ...");
    return rows;
  }

  private static List<String> cells(String line) {
    String l = line.strip();
    if (!l.startsWith("|")) return List.of();
    List<String> out = new ArrayList<>();
    for (String cell : l.substring(1).split("\\|")) {
      out.add(cell.strip().replace("`", ""));
    }
    return out;
  }

  /** The images the Dockerfile's stages start from; a stage built on an earlier stage is not an image. */
  private static List<String> dockerfileFromImages() throws IOException {
    List<String> out = new ArrayList<>();
    Set<String> stages = new java.util.HashSet<>();
    for (String line : Files.readAllLines(DOCKERFILE)) {
      String[] words = line.strip().split("\\s+");
      if (words.length >= 2 && words[0].equalsIgnoreCase("FROM")) {
        int at = words[1].startsWith("--platform") && words.length >= 3 ? 2 : 1;
        if (!stages.contains(words[at])) out.add(words[at]);
        if (words.length >= at + 3 && words[at + 1].equalsIgnoreCase("AS")) stages.add(words[at + 2]);
      }
    }
    return out;
  }

  /** Stage name → the lines of that stage, in file order. */
  private static Map<String, List<String>> dockerfileStages() throws IOException {
    Map<String, List<String>> out = new java.util.LinkedHashMap<>();
    List<String> current = null;
    for (String line : Files.readAllLines(DOCKERFILE)) {
      String[] words = line.strip().split("\\s+");
      if (words.length >= 1 && words[0].equalsIgnoreCase("FROM")) {
        current = new ArrayList<>();
        out.put(words.length >= 4 && words[2].equalsIgnoreCase("AS") ? words[3] : "stage-" + out.size(), current);
      }
      if (current != null) current.add(line.strip());
    }
    return out;
  }

  /**
   * The API and the workers run the production image, the Dockerfile's default (last) stage, with
   * the launcher's classpath only; the demo's stub runs the demo stage, built on devstack's
   * classpath. ProductionClasspathTest checks that classpath holds no dev scaffolding.
   */
  @Test
  void theServiceRunsTheProductionStageAndOnlyTheStubTheDemoStage() throws IOException {
    Map<String, List<String>> stages = dockerfileStages();
    List<String> names = new ArrayList<>(stages.keySet());
    assertEquals("production", names.get(names.size() - 1), "the default target is the production stage: " + names);
    assertTrue(stages.get("production").contains("COPY --from=build /out/ /app/"), "production copies the launcher's classpath");
    assertTrue(stages.get("demo").contains("COPY --from=build /out-demo/ /app/"), "demo copies devstack's classpath");
    String dockerfile = Files.readString(DOCKERFILE);
    assertTrue(dockerfile.contains("collect-classpath.sh launcher/target /out "), "/out is the launcher's classpath");
    assertTrue(dockerfile.contains("collect-classpath.sh devstack/target /out-demo"), "/out-demo is devstack's");
    for (String name : appServices()) {
      Map<String, Object> build = map(service(name).get("build"), name + ".build");
      String expected = name.equals("channel-stub") ? "demo" : "production";
      assertEquals(expected, build.get("target"), name + " builds the " + expected + " stage");
    }
    assertNotEquals(image("api"), image("channel-stub"), "the stub's image is not the service's");
  }

  record ImageRef(String repository, String tag, String digest) {
    static ImageRef parse(String ref) {
      String digest = null;
      int at = ref.indexOf('@');
      if (at >= 0) {
        digest = ref.substring(at + 1);
        ref = ref.substring(0, at);
      }
      int colon = ref.lastIndexOf(':');
      if (colon <= ref.lastIndexOf('/')) return new ImageRef(ref, null, digest);
      return new ImageRef(ref.substring(0, colon), ref.substring(colon + 1), digest);
    }
  }

  private static void assertPinned(String what, String ref) {
    assertFalse(ref.contains("${"), what + ": image chosen by a variable: " + ref);
    ImageRef image = ImageRef.parse(ref);
    assertNotNull(image.tag(), what + ": image without a tag: " + ref);
    assertFalse(image.tag().equalsIgnoreCase("latest"), what + ": image tagged latest: " + ref);
    assertTrue(image.tag().matches("v?\\d+\\.\\d+.*"),
        what + ": tag is not a version (at least major.minor): " + ref);
  }

  private static int major(String tag) {
    Matcher m = Pattern.compile("^v?(\\d+)").matcher(tag);
    assertTrue(m.find(), "no version in tag " + tag);
    return Integer.parseInt(m.group(1));
  }
}
