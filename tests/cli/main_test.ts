import assert from "node:assert/strict";

const main = new URL("../../src/cli/main.ts", import.meta.url).pathname;

async function apf(permissions: string[], ...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", ...permissions, main, ...args],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}

const TASK_PERMISSIONS = ["--allow-read", "--allow-env=LOG_TOKENS,LOG_STREAM"];

Deno.test("the apf process exits 0, 1 and 2 as documented", async () => {
  const good = new URL("../../examples/apf.yaml", import.meta.url).pathname;
  const bad = new URL("./fixtures/configmap.yaml", import.meta.url).pathname;
  const ok = await apf(TASK_PERMISSIONS, "validate", good);
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(ok.stdout, "valid: 1 file, 1 FlowSchemas, 1 PriorityLevelConfigurations\n");
  const invalid = await apf(TASK_PERMISSIONS, "validate", bad);
  assert.equal(invalid.code, 1);
  assert.match(invalid.stdout, /configmap\.yaml: document 1, line 1: unsupported kind "ConfigMap"/);
  const unreadable = await apf(TASK_PERMISSIONS, "validate", `${bad}.missing`);
  assert.equal(unreadable.code, 2);
  assert.match(unreadable.stderr, /^cannot read .*configmap\.yaml\.missing: /);
  // Without env permission, npm:yaml cannot run on Deno: the message says what to grant.
  const noEnv = await apf(["--allow-read"], "validate", good);
  assert.equal(noEnv.code, 2);
  assert.match(noEnv.stderr, /--allow-env=LOG_TOKENS,LOG_STREAM/);
});

Deno.test("the start task's command prints the built-in configuration", async () => {
  const r = await apf(TASK_PERMISSIONS, "config", "print");
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    /^Priority levels \(server concurrency limit 600, shares 245, nominal sum 602\)/,
  );
});

Deno.test("the apf process simulates a scenario file and exits 1 on an invalid one", async () => {
  const good =
    new URL("../../examples/scenarios/uniform_handsize_1.json", import.meta.url).pathname;
  const ok = await apf(TASK_PERMISSIONS, "simulate", good);
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(JSON.parse(ok.stdout).name, "uniform-handsize-1");
  const bad = new URL("./fixtures/bad_scenario.json", import.meta.url).pathname;
  const invalid = await apf(TASK_PERMISSIONS, "simulate", bad);
  assert.equal(invalid.code, 1);
  assert.match(invalid.stderr, /clients\[0\]\.threads: must be an integer >= 1, got 0/);
});
