/**
 * The controller object in workerd: where its configuration comes from
 * (`APF_CONFIG` at each start, `PUT /apf/config` in between), what it does
 * with an invalid one, and that it survives a restart through its storage.
 */

import assert from "node:assert/strict";
import type { ControllerObject } from "../../src/cloudflare/controller_object.ts";
import { eventually } from "./_eventually.ts";
import { byUserSchema, queuingLevel } from "./_manifests.ts";
import { MINIFLARE_TEST_OPTIONS, type StartedWorker, startWorker } from "./_miniflare.ts";

const TOKEN = "a-test-token-of-some-length";

const level = (name: string) =>
  queuingLevel(name) + byUserSchema(name, 1000, "system:authenticated");

function start(config: string, persist: string): Promise<StartedWorker> {
  return startWorker({
    entry: new URL("./_fixtures/apf_test_worker.ts", import.meta.url),
    durableObjects: { APF_LEVELS: "PriorityLevelObject", APF_CONTROLLER: "ControllerObject" },
    bindings: {
      APF_CONFIG: config,
      APF_SERVER_CONCURRENCY: "10",
      APF_MANDATORY_ONLY: "true",
      APF_TOKEN: TOKEN,
      API_KEYS: JSON.stringify({ "key-a": { name: "ann", groups: ["customers"] } }),
    },
    miniflare: { durableObjectsPersist: persist },
  });
}

async function levelOf(worker: StartedWorker): Promise<string> {
  const res = await worker.fetch("/", { headers: { "X-Api-Key": "key-a" } });
  assert.equal(res.status, 200);
  return ((await res.json()) as { level: string }).level;
}

async function version(worker: StartedWorker): Promise<number> {
  const controller = await worker.durableObject<ControllerObject>("APF_CONTROLLER", "controller");
  return (await controller.configuration()).version;
}

Deno.test({
  name:
    "controller: APF_CONFIG at each start, PUT /apf/config in between, refused whole when invalid",
  ...MINIFLARE_TEST_OPTIONS,
  fn: async () => {
    const persist = await Deno.makeTempDir({ prefix: "apf-do-" });
    try {
      {
        await using worker = await start(level("first"), persist);
        assert.equal(await levelOf(worker), "first");
        assert.equal(await version(worker), 1);

        // Operators replace it at run time; an invalid one changes nothing.
        const put = (body: string, token = TOKEN) =>
          worker.fetch("/apf/config", {
            method: "PUT",
            body,
            headers: { Authorization: `Bearer ${token}` },
          });
        const forbidden = await put(level("x"), "wrong-token-wrong-token");
        assert.equal(forbidden.status, 403);
        await forbidden.body?.cancel();
        const invalid = await put("kind: PriorityLevelConfiguration\nmetadata: {}\n");
        assert.equal(invalid.status, 400);
        assert.match(await invalid.text(), /^refused: /);
        assert.equal(await version(worker), 1);
        const ok = await put(level("second"));
        assert.deepEqual(await ok.json(), { version: 2 });
        // Pushed to the level objects; the Worker picks it up at its next refresh (10 s), so a
        // fresh isolate's view is what the controller now hands out.
        const controller = await worker.durableObject<ControllerObject>(
          "APF_CONTROLLER",
          "controller",
        );
        const update = structuredClone({ ...await controller.levelUpdate() });
        assert.equal(update.version, 2);
        assert.ok(JSON.stringify(update.configuration).includes('"second"'));
      }
      {
        // A restart with the same APF_CONFIG keeps what operators set (version 2, stored).
        await using worker = await start(level("first"), persist);
        assert.equal(await version(worker), 2);
        assert.equal(await levelOf(worker), "second");
      }
      {
        // A deploy that changes APF_CONFIG wins: applied when the controller starts.
        await using worker = await start(level("third"), persist);
        await eventually(() => version(worker), (v) => v === 3);
        assert.equal(await levelOf(worker), "third");
      }
      {
        // An invalid APF_CONFIG in a new deploy: the configuration in force keeps serving.
        await using worker = await start("kind: FlowSchema\nspec: 7\n", persist);
        assert.equal(await version(worker), 3);
        assert.equal(await levelOf(worker), "third");
        await eventually(() => Promise.resolve(worker.logs()), (l) => l.includes("APF_CONFIG"));
        assert.match(
          worker.logs(),
          /apf: the new APF_CONFIG is invalid, keeping the configuration in force: Cannot load configuration: 1 error/,
        );
      }
    } finally {
      await Deno.remove(persist, { recursive: true });
    }
  },
});

Deno.test({
  name: "controller: an invalid APF_CONFIG at the first start serves the built-in configuration",
  ...MINIFLARE_TEST_OPTIONS,
  fn: async () => {
    const persist = await Deno.makeTempDir({ prefix: "apf-do-" });
    try {
      await using worker = await start("kind: FlowSchema\nspec: 7\n", persist);
      // Built-in, mandatory only: authenticated users land in catch-all, and are served.
      assert.equal(await levelOf(worker), "catch-all");
      await eventually(() => Promise.resolve(worker.logs()), (l) => l.includes("invalid"));
      assert.match(
        worker.logs(),
        /apf: the configuration from env is invalid, serving the built-in one/,
      );
    } finally {
      await Deno.remove(persist, { recursive: true });
    }
  },
});
