import assert from "node:assert/strict";
import {
  APF_TASK_PERMISSIONS,
  apfCommand,
  apfOutput,
  START_TASK_PERMISSIONS,
} from "../_helpers/cli.ts";

/** Runs apf to its end with exactly `permissions`. */
function apf(permissions: readonly string[], ...args: string[]) {
  return apfOutput(args, { permissions });
}

Deno.test("the apf, start and test tasks grant exactly these permissions", async () => {
  const config = JSON.parse(
    await Deno.readTextFile(new URL("../../deno.json", import.meta.url)),
  );
  // `apf serve` listens where it is told and proxies to any host, and may keep its budgets in a
  // Deno KV file it opens and writes (kv:PATH: --unstable-kv, --allow-write); the demo stays on
  // loopback and writes nothing.
  const env = "--allow-env=LOG_TOKENS,LOG_STREAM,INIT_CWD";
  assert.deepEqual(APF_TASK_PERMISSIONS, [
    "--unstable-kv",
    "--allow-net",
    "--allow-read",
    "--allow-write",
    env,
  ]);
  assert.deepEqual(START_TASK_PERMISSIONS, ["--allow-net=127.0.0.1", "--allow-read", env]);
  assert.match(config.tasks.apf, / src\/cli\/main\.ts$/);
  assert.match(config.tasks.start, / src\/cli\/main\.ts demo$/);
  assert.match(config.tasks.test, /--allow-net=127\.0\.0\.1 /);
  // The tests start workerd through Miniflare (tests/cloudflare/_miniflare.ts), which lists the
  // whole environment and keeps a scratch directory under /tmp. The apf processes the tests
  // spawn keep the tasks' narrow permissions.
  assert.match(config.tasks.test, / --allow-env --allow-write=\/tmp$/);
});

/** Spawns apf with piped stdio; the caller writes stdin and reads stdout. */
function spawn(args: string[], env: Record<string, string> = {}) {
  return apfCommand(args, { permissions: APF_TASK_PERMISSIONS, env, stdin: "piped" }).spawn();
}

Deno.test("a closed stdout ends apf quietly with status 0", async () => {
  // 3,000 errors (about 500 KB) cannot fit in the pipe: apf must write into a closed pipe.
  const manifest = "kind: List\nitems:\n" + "- {apiVersion: v1, kind: ConfigMap}\n".repeat(3_000);
  const child = spawn(["validate", "-"]);
  const stdin = child.stdin.getWriter();
  await stdin.write(new TextEncoder().encode(manifest));
  await stdin.close();
  const reader = child.stdout.getReader();
  const first = await reader.read();
  assert.equal(first.done, false);
  await reader.cancel();
  const stderr = new TextDecoder().decode(
    (await new Response(child.stderr).arrayBuffer()) as ArrayBuffer,
  );
  const status = await child.status;
  assert.equal(stderr, "");
  assert.equal(status.code, 0);
});

Deno.test("endless standard input stops at 16 MiB with exit 2", async () => {
  const child = spawn(["validate", "-"]);
  const stdin = child.stdin.getWriter();
  const block = new TextEncoder().encode("a: b\n".repeat(64 * 1024));
  try {
    // 17 MiB and more; the child stops reading at 16 MiB and exits.
    for (let i = 0; i < 64; i++) await stdin.write(block);
    await stdin.close();
  } catch {
    // The child exited and closed its end: expected.
  }
  const out = await child.output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 2);
  assert.equal(stderr, "cannot read -: larger than 16 MiB\n");
});

Deno.test("relative paths are the caller's: INIT_CWD, as set by deno task", async () => {
  const fixtures = new URL("./fixtures/", import.meta.url).pathname;
  const child = spawn(["validate", "configmap.yaml"], { INIT_CWD: fixtures });
  await child.stdin.close();
  const out = await child.output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  assert.equal(out.code, 1, decode(out.stderr));
  assert.match(decode(out.stdout), /^configmap\.yaml: document 1, line 1: unsupported kind/);
});

Deno.test("the apf process exits 0, 1 and 2 as documented", async () => {
  const good = new URL("../../examples/apf.yaml", import.meta.url).pathname;
  const bad = new URL("./fixtures/configmap.yaml", import.meta.url).pathname;
  const ok = await apf(APF_TASK_PERMISSIONS, "validate", good);
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(ok.stdout, "valid: 1 file, 1 FlowSchemas, 1 PriorityLevelConfigurations\n");
  const invalid = await apf(APF_TASK_PERMISSIONS, "validate", bad);
  assert.equal(invalid.code, 1);
  assert.match(invalid.stdout, /configmap\.yaml: document 1, line 1: unsupported kind "ConfigMap"/);
  const unreadable = await apf(APF_TASK_PERMISSIONS, "validate", `${bad}.missing`);
  assert.equal(unreadable.code, 2);
  assert.match(unreadable.stderr, /^cannot read .*configmap\.yaml\.missing: /);
  // Without env permission, npm:yaml cannot run on Deno: the message says what to grant.
  const noEnv = await apf(["--allow-read"], "validate", good);
  assert.equal(noEnv.code, 2);
  assert.match(noEnv.stderr, /--allow-env=LOG_TOKENS,LOG_STREAM/);
});

Deno.test("the start task's command prints the built-in configuration", async () => {
  const r = await apf(APF_TASK_PERMISSIONS, "config", "print");
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    /^Priority levels \(server concurrency limit 600, shares 245, nominal sum 602\)/,
  );
});

Deno.test("the apf process simulates a scenario file and exits 1 on an invalid one", async () => {
  const good =
    new URL("../../examples/scenarios/uniform_handsize_1.json", import.meta.url).pathname;
  const ok = await apf(APF_TASK_PERMISSIONS, "simulate", good);
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(JSON.parse(ok.stdout).name, "uniform-handsize-1");
  const bad = new URL("./fixtures/bad_scenario.json", import.meta.url).pathname;
  const invalid = await apf(APF_TASK_PERMISSIONS, "simulate", bad);
  assert.equal(invalid.code, 1);
  assert.match(invalid.stderr, /clients\[0\]\.threads: must be an integer >= 1, got 0/);
});
