import assert from "node:assert/strict";
import { loadConfiguration } from "../../src/config/load.ts";
import { type ReloadResult, serveCoordinator } from "../../src/deno/mod.ts";

const TOKEN = "a-long-enough-secret";
const EMPTY = { flowSchemas: [], priorityLevels: [] };

function level(name: string, shares: number) {
  return `apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: { name: ${name} }
spec:
  type: Limited
  limited: { nominalConcurrencyShares: ${shares}, limitResponse: { type: Reject } }
`;
}

const config = (text: string) => loadConfiguration({ manifests: [{ name: "c.yaml", text }] });

Deno.test("a reload says what it changed; an empty one is refused unless asked, and nothing changes", async () => {
  const results: ReloadResult[] = [];
  await using server = serveCoordinator({
    configuration: config(level("a", 10) + "---\n" + level("b", 10)),
    listen: { hostname: "127.0.0.1", port: 0 },
    adminListen: { hostname: "127.0.0.1", port: 0 },
    token: TOKEN,
    onReload: (r) => results.push(r),
  });
  const names = () => server.coordinator.snapshot().levels.map((l) => l.name).sort();
  assert.ok(names().includes("a") && names().includes("b"));

  const diff = await server.reload(config(level("a", 20) + "---\n" + level("c", 5)));
  assert.deepEqual(diff.priorityLevels, { added: ["c"], removed: ["b"], changed: ["a"] });
  assert.deepEqual(diff.flowSchemas, { added: [], removed: [], changed: [] });

  await assert.rejects(
    server.reload(EMPTY),
    /no FlowSchema and no PriorityLevelConfiguration, and would drop all 2 of the current one/,
  );
  assert.ok(names().includes("a") && names().includes("c"), "the refused reload changed nothing");
  assert.deepEqual(results.map((r) => r.applied), [true, false]);

  // Over the admin route (without `load`, the current objects are applied again).
  const admin = `http://127.0.0.1:${server.adminAddr!.port}/reload`;
  const same = await fetch(admin, {
    method: "POST",
    headers: { Authorization: `Bearer ${TOKEN}` },
  });
  assert.equal(await same.text(), "reloaded: no change\n");
  const emptied = await server.reload(EMPTY, { allowEmpty: true });
  assert.deepEqual(emptied.priorityLevels.removed.sort(), ["a", "c"]);
  assert.ok(!names().includes("a"));
  assert.equal(results.at(-1)?.applied, true);
});
