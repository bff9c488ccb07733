/**
 * Configuration benchmarks: loading the Kubernetes bootstrap manifests and
 * deriving the effective configuration. Run with `deno task bench`.
 */

import { bootstrapConfiguration, effectiveConfiguration, parseConfiguration } from "../mod.ts";
import { mergeWithBootstrap } from "../src/config/mod.ts";

const text = await Deno.readTextFile(
  new URL("../tests/config/fixtures/k8s-bootstrap-config.yaml", import.meta.url),
);
const builtin = bootstrapConfiguration();
const objects = [...builtin.priorityLevels, ...builtin.flowSchemas];

Deno.bench(
  "parse + validate 19 bootstrap manifests (YAML)",
  { group: "load", baseline: true },
  () => {
    parseConfiguration({ manifests: [{ name: "bootstrap.yaml", text }] });
  },
);

Deno.bench("validate 19 bootstrap objects (no YAML)", { group: "load" }, () => {
  parseConfiguration({ objects });
});

Deno.bench("merge with bootstrap + effective limits (ServerCL 600)", () => {
  effectiveConfiguration(mergeWithBootstrap(builtin).configuration);
});
