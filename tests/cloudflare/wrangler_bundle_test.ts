/**
 * The example Worker as its users build it: wrangler bundles
 * `examples/cloudflare_worker/` (its own `wrangler.jsonc`, with `@apf/edge`
 * aliased to this checkout instead of the JSR package), and Miniflare serves
 * that bundle with the configuration's bindings.
 */

import assert from "node:assert/strict";
// In the module graph so that Deno installs wrangler (its bin too) into node_modules: the
// package's own dependencies leave the test tooling out (dev/import_map.json has it).
import wranglerPackage from "wrangler/package.json" with { type: "json" };
import { Miniflare } from "miniflare";
import { COMPATIBILITY_DATE, MINIFLARE_TEST_OPTIONS } from "./_miniflare.ts";

const root = new URL("../../", import.meta.url);
const path = (p: string) => new URL(p, root).pathname;

/** `wrangler.jsonc` without its comment lines (it has no comment after a value). */
function readWranglerConfig(): Record<string, unknown> {
  const text = Deno.readTextFileSync(path("examples/cloudflare_worker/wrangler.jsonc"));
  return JSON.parse(text.split("\n").filter((l) => !l.trim().startsWith("//")).join("\n"));
}

Deno.test({
  name: "the example Worker, bundled by wrangler, serves in workerd with its wrangler.jsonc",
  ...MINIFLARE_TEST_OPTIONS,
  fn: async () => {
    assert.equal(wranglerPackage.version, "4.86.0", "the wrangler of dev/import_map.json");
    const config = readWranglerConfig();
    assert.equal(config.compatibility_date, COMPATIBILITY_DATE, "pinned like the tests' workerd");
    const dir = await Deno.makeTempDir({ prefix: "apf-wrangler-" });
    let mf: Miniflare | undefined;
    try {
      const { $schema: _, ...rest } = config;
      await Deno.writeTextFile(
        `${dir}/wrangler.json`,
        JSON.stringify({
          ...rest,
          main: path("examples/cloudflare_worker/src/index.ts"),
          alias: {
            "@apf/edge/hono": path("src/hono/mod.ts"),
            "@apf/edge/cloudflare": path("src/cloudflare/mod.ts"),
            "@apf/edge": path("mod.ts"),
          },
        }),
      );
      const out = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          path("node_modules/wrangler/bin/wrangler.js"),
          "deploy",
          "--dry-run",
          "--outdir",
          `${dir}/dist`,
          "--config",
          `${dir}/wrangler.json`,
        ],
        cwd: dir,
        env: { NO_COLOR: "1", WRANGLER_SEND_METRICS: "false", CI: "1" },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const log = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
      assert.ok(out.success, log);
      assert.match(log, /env\.APF_LEVELS \(PriorityLevelObject\)\s+Durable Object/);
      const bundle = await Deno.readTextFile(`${dir}/dist/index.js`);

      const vars = config.vars as Record<string, unknown>;
      mf = new Miniflare({
        modules: [{ type: "ESModule", path: `${dir}/dist/index.js`, contents: bundle }],
        modulesRoot: `${dir}/dist`,
        compatibilityDate: config.compatibility_date as string,
        durableObjects: { APF_LEVELS: "PriorityLevelObject", APF_CONTROLLER: "ControllerObject" },
        bindings: { ...vars, APF_TOKEN: "a-token-for-the-bundle-test" },
        host: "127.0.0.1",
        port: 0,
      });
      const url = await mf.ready;
      const alice = await mf.dispatchFetch(new URL("/", url), {
        headers: { "X-Api-Key": "key-alice" },
      });
      assert.equal(alice.status, 200);
      assert.deepEqual(await alice.json(), { user: "alice", level: "customers", waitedMs: 0 });
      assert.ok(alice.headers.get("X-Kubernetes-PF-PriorityLevel-UID"));
      const anonymous = await mf.dispatchFetch(new URL("/", url));
      assert.equal(((await anonymous.json()) as { level: string }).level, "anonymous");
    } finally {
      await mf?.dispose();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
