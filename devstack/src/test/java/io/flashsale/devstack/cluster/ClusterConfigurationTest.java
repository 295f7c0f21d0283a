package io.flashsale.devstack.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * docker/compose.yaml and ./flashsale cluster cannot drift: the same Temporal configuration files
 * and scripts, the server and UI versions the flashsale script pins, the same namespace and
 * retention, and every variable the server's configuration template needs set by both.
 */
class ClusterConfigurationTest {
  private static final Path HOME = Path.of("..").toAbsolutePath().normalize();
  private static final Path DOCKER = HOME.resolve("docker");
  /** {{ env "NAME" }} with or without | default "...". */
  private static final Pattern TEMPLATE_ENV = Pattern.compile("env \"([A-Z_]+)\"( \\| default)?");

  private static Map<String, Object> services;
  private static String script;

  @BeforeAll
  static void load() throws IOException {
    try (Reader in = Files.newBufferedReader(DOCKER.resolve("compose.yaml"))) {
      Map<String, Object> compose = map(new Yaml(new SafeConstructor(new LoaderOptions())).load(in));
      services = map(compose.get("services"));
    }
    script = Files.readString(HOME.resolve("flashsale"));
  }

  @Test
  void composeMountsTheServerConfigurationTheClusterReads() {
    String entrypoint = String.join(" ", strings(service("temporal").get("entrypoint")));
    assertTrue(entrypoint.contains("temporal-server --root /etc/temporal --config config --env " + Cluster.SERVER_CONFIG_ENV),
        "compose's server reads /etc/temporal/config/" + Cluster.SERVER_CONFIG_ENV + ".yaml: " + entrypoint);
    Map<String, String> mounts = mounts("temporal");
    assertEquals("/etc/temporal/config/" + Cluster.SERVER_CONFIG_ENV + ".yaml",
        mounts.get(Cluster.SERVER_CONFIG_DIR + "/" + Cluster.SERVER_CONFIG_ENV + ".yaml"),
        "the server configuration ./flashsale cluster passes as --config " + Cluster.SERVER_CONFIG_DIR);
    String dynamic = mounts.get(Cluster.DYNAMIC_CONFIG);
    assertTrue(dynamic != null, "compose mounts " + Cluster.DYNAMIC_CONFIG + ": " + mounts);
    assertEquals(dynamic, environment("temporal").get("TEMPORAL_DYNAMIC_CONFIG_FILE"),
        "the server is pointed at the mounted dynamic configuration");
    assertTrue(Files.isRegularFile(HOME.resolve(Cluster.SERVER_CONFIG_DIR).resolve(Cluster.SERVER_CONFIG_ENV + ".yaml")));
    assertTrue(Files.isRegularFile(HOME.resolve(Cluster.DYNAMIC_CONFIG)));
  }

  @Test
  void bothRunTheSameSchemaAndSetupScripts() {
    assertTrue(mounts("temporal-schema").containsKey(Cluster.SCHEMA_SCRIPT),
        "temporal-schema runs " + Cluster.SCHEMA_SCRIPT + ": " + mounts("temporal-schema"));
    assertTrue(mounts("temporal-setup").containsKey(Cluster.SETUP_SCRIPT),
        "temporal-setup runs " + Cluster.SETUP_SCRIPT + ": " + mounts("temporal-setup"));
    assertEquals(Cluster.NAMESPACE, environment("temporal-setup").get("TEMPORAL_NAMESPACE"), "namespace");
    assertEquals(Cluster.RETENTION, environment("temporal-setup").get("TEMPORAL_NAMESPACE_RETENTION"), "retention");
  }

  @Test
  void versionsAreTheOnesTheScriptPins() {
    assertEquals(Cluster.SERVER_VERSION, pinned("TEMPORAL_SERVER_VERSION"), "flashsale's TEMPORAL_SERVER_VERSION");
    assertEquals(Cluster.UI_SERVER_VERSION, pinned("TEMPORAL_UI_SERVER_VERSION"), "flashsale's TEMPORAL_UI_SERVER_VERSION");
    String server = Cluster.SERVER_VERSION.substring(1);
    assertEquals("temporalio/server:" + server, image("temporal"));
    assertEquals("temporalio/ui:" + Cluster.UI_SERVER_VERSION.substring(1), image("temporal-ui"));
    for (String oneShot : List.of("temporal-schema", "temporal-setup")) {
      assertTrue(image(oneShot).startsWith("temporalio/admin-tools:" + server + "-"),
          oneShot + ": admin-tools of server " + server + ", found " + image(oneShot));
    }
  }

  @Test
  void everyVariableTheServerConfigurationNeedsIsSetByBoth() throws IOException {
    String template = Files.readString(HOME.resolve(Cluster.SERVER_CONFIG_DIR).resolve(Cluster.SERVER_CONFIG_ENV + ".yaml"));
    assertTrue(template.lines().findFirst().orElse("").matches("#\\s*enable-template\\s*"),
        "the server renders the file as a template only with # enable-template in a leading comment");
    Set<String> read = new LinkedHashSet<>();
    Set<String> withoutDefault = new LinkedHashSet<>();
    Matcher m = TEMPLATE_ENV.matcher(template);
    while (m.find()) {
      read.add(m.group(1));
      if (m.group(2) == null && !template.contains("default (env \"" + m.group(1) + "\")")) withoutDefault.add(m.group(1));
    }
    assertEquals(Set.of("TEMPORAL_DB_PASSWORD"), withoutDefault, "only the password has no default");
    Map<String, String> local = Cluster.serverEnvironment(7233, 5432, "secret");
    local.put("TEMPORAL_DYNAMIC_CONFIG_FILE", "x");
    for (String name : local.keySet()) assertTrue(read.contains(name), "the template reads " + name + " (cluster sets it)");
    for (String name : environment("temporal").keySet()) {
      assertTrue(read.contains(name), "the template reads " + name + " (compose sets it)");
    }
    for (String name : withoutDefault) {
      assertTrue(local.containsKey(name), "./flashsale cluster sets " + name);
      assertTrue(environment("temporal").containsKey(name), "compose sets " + name);
    }
  }

  @Test
  void theUiConfigurationReadsWhatComposeSetsOnTheUiImage() throws IOException {
    String ui = Files.readString(HOME.resolve(Cluster.UI_CONFIG_DIR).resolve(Cluster.SERVER_CONFIG_ENV + ".yaml"));
    Set<String> read = new LinkedHashSet<>();
    Matcher m = TEMPLATE_ENV.matcher(ui);
    while (m.find()) read.add(m.group(1));
    read.remove("TEMPORAL_UI_PORT"); // the image listens on its own port; compose publishes it
    assertEquals(read, environment("temporal-ui").keySet(), "the same UI variables in both");
    assertEquals(Cluster.NAMESPACE, environment("temporal-ui").get("TEMPORAL_DEFAULT_NAMESPACE"));
    assertTrue(environment("temporal-ui").get("TEMPORAL_DISABLE_WRITE_ACTIONS").endsWith(":-true}"),
        "compose: write actions off unless turned on");
    assertTrue(ui.contains("env \"TEMPORAL_DISABLE_WRITE_ACTIONS\" | default \"true\""),
        "cluster: write actions off unless turned on");
  }

  @Test
  void everyClientOfTheFrontendHoldsTheDeploymentsCertificates() throws IOException {
    String config = Files.readString(HOME.resolve(Cluster.SERVER_CONFIG_DIR).resolve(Cluster.SERVER_CONFIG_ENV + ".yaml"));
    assertEquals(2, config.split("requireClientAuth: true", -1).length - 1,
        "the frontend and the internode listeners both require a client certificate");
    assertTrue(config.contains("env \"TEMPORAL_TLS_DIR\" | default \"/etc/temporal/tls\""),
        "the server reads its certificates from TEMPORAL_TLS_DIR (the cluster's) or /etc/temporal/tls (compose's)");
    assertEquals(certificates("/etc/temporal/tls", "server"), certificateMounts("temporal"),
        "compose mounts the server's certificate and key, and the CA's certificate, where the server reads them");
    Path inContainer = Path.of("/etc/flashsale/tls");
    Map<String, String> clients = Map.of("temporal-setup", "operator", "temporal-ui", "web-ui", "api", "service",
        "worker-1", "service", "worker-2", "service");
    clients.forEach((service, client) -> assertEquals(certificates(inContainer.toString(), client),
        certificateMounts(service), service + " holds the CA's certificate and " + client + "'s, nothing else"));
    for (String service : services.keySet()) {
      assertTrue(certificateMounts(service).keySet().stream().noneMatch(source -> source.contains("private")),
          service + " mounts nothing of the CA's private folder");
    }
    Cluster.Tls tls = new Cluster.Tls(inContainer);
    Map<String, String> setup = environment("temporal-setup");
    tls.cliEnvironment("operator").forEach((k, v) -> assertEquals(v, setup.get(k), "temporal-setup's CLI: " + k));
    Map<String, String> ui = environment("temporal-ui");
    assertEquals(tls.ca().toString(), ui.get("TEMPORAL_TLS_CA"));
    assertEquals(tls.cert("web-ui").toString(), ui.get("TEMPORAL_TLS_CERT"));
    assertEquals(tls.key("web-ui").toString(), ui.get("TEMPORAL_TLS_KEY"));
    assertEquals(Cluster.Tls.SERVER_NAME, ui.get("TEMPORAL_TLS_SERVER_NAME"));
    assertEquals("true", ui.get("TEMPORAL_TLS_ENABLE_HOST_VERIFICATION"), "the UI checks the server's name");
  }

  // ---- helpers ----

  /** What a service should mount of docker/certs: the CA's certificate and one client's certificate and key. */
  private static Map<String, String> certificates(String target, String client) {
    Map<String, String> out = new LinkedHashMap<>();
    for (String file : List.of("ca.pem", client + ".pem", client + ".key")) out.put("docker/certs/" + file, target + "/" + file);
    return out;
  }

  private static Map<String, String> certificateMounts(String name) {
    Map<String, String> out = new LinkedHashMap<>();
    mounts(name).forEach((source, target) -> {
      if (source.startsWith("docker/certs")) out.put(source, target);
    });
    return out;
  }

  private static String pinned(String variable) {
    Matcher m = Pattern.compile("(?m)^" + variable + "=(\\S+)").matcher(script);
    if (!m.find()) fail("flashsale pins no " + variable);
    return m.group(1);
  }

  /** A service's bind mounts: source relative to the project (from ./x in docker/) → target. */
  private static Map<String, String> mounts(String name) {
    Map<String, String> out = new LinkedHashMap<>();
    for (String volume : strings(service(name).get("volumes"))) {
      String[] parts = volume.split(":");
      if (!parts[0].startsWith(".")) continue;
      Path source = DOCKER.resolve(parts[0]).normalize();
      out.put(HOME.relativize(source).toString(), parts[1]);
    }
    return out;
  }

  private static Map<String, Object> service(String name) {
    assertTrue(services.containsKey(name), "compose.yaml has no service " + name);
    return map(services.get(name));
  }

  private static String image(String name) {
    return String.valueOf(service(name).get("image"));
  }

  private static Map<String, String> environment(String name) {
    Map<String, String> out = new LinkedHashMap<>();
    Object env = service(name).get("environment");
    if (env instanceof Map<?, ?> m) m.forEach((k, v) -> out.put(String.valueOf(k), String.valueOf(v)));
    return out;
  }

  private static List<String> strings(Object o) {
    if (o instanceof List<?> l) return l.stream().map(String::valueOf).toList();
    return o == null ? List.of() : List.of(String.valueOf(o));
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object o) {
    if (!(o instanceof Map)) fail("not a mapping: " + o);
    return (Map<String, Object>) o;
  }
}
