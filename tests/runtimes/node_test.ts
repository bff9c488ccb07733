/**
 * The library on the oldest Node.js we support (20): bundled as a user's
 * bundler would, run by the `node` on the PATH. Requests that have to queue
 * are where Node 20 differs (no ES2024 `Promise.withResolvers`).
 */

import assert from "node:assert/strict";
import * as esbuild from "esbuild";

const MIN_NODE_MAJOR = 20;

function nodeVersion(): string | null {
  try {
    const out = new Deno.Command("node", { args: ["--version"], stdout: "piped", stderr: "null" })
      .outputSync();
    return out.success ? new TextDecoder().decode(out.stdout).trim() : null;
  } catch {
    return null;
  }
}

const version = nodeVersion();
if (version === null) console.warn("tests/runtimes/node_test.ts: no node on the PATH, ignored");

Deno.test({
  name: `apf() on Node ${version ?? "(missing)"}: queued requests are served, one seat at a time`,
  ignore: version === null,
  fn: async () => {
    const major = Number(/^v(\d+)/.exec(version!)?.[1]);
    assert.ok(major >= MIN_NODE_MAJOR, `node ${version} is older than we support`);
    let code: string;
    try {
      const result = await esbuild.build({
        entryPoints: [new URL("./_node_app.ts", import.meta.url).pathname],
        bundle: true,
        write: false,
        format: "esm",
        platform: "node",
        target: `node${MIN_NODE_MAJOR}`,
        logLevel: "silent",
        // The CommonJS packages in the bundle (yaml) require Node's built-ins.
        banner: {
          js:
            'import { createRequire } from "node:module"; const require = createRequire(import.meta.url);',
        },
      });
      code = result.outputFiles[0]!.text;
    } finally {
      await esbuild.stop();
    }
    const file = await Deno.makeTempFile({ dir: "/tmp", suffix: ".mjs" });
    try {
      await Deno.writeTextFile(file, code);
      const out = await new Deno.Command("node", { args: [file], stdout: "piped", stderr: "piped" })
        .output();
      const stderr = new TextDecoder().decode(out.stderr);
      assert.ok(out.success, stderr);
      const seen = JSON.parse(new TextDecoder().decode(out.stdout));
      assert.deepEqual(seen.statuses, [200, 200, 200, 200, 200, 200], stderr);
      assert.equal(seen.maxActive, seen.limit, "the level's seats, no more");
      assert.equal(seen.seatsInUse, 0);
    } finally {
      await Deno.remove(file);
    }
  },
});
