import assert from "node:assert/strict";
import {
  type ConfigurationStore,
  ControllerHost,
  type StoredConfiguration,
} from "../../src/cloudflare/_controller_host.ts";
import type { LevelHost } from "../../src/cloudflare/_level_host.ts";
import { queuingLevel } from "./_manifests.ts";
import { levelHosts } from "./_in_process.ts";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import { settle } from "../_helpers/settle.ts";

const manifests = (names: string[]) =>
  names.map((name) =>
    queuingLevel(name, { lendablePercent: 50, queues: 1, handSize: 1, queueLengthLimit: 100 })
  ).join("\n");

function memoryStore(): ConfigurationStore & { value: StoredConfiguration | undefined } {
  const store = {
    value: undefined as StoredConfiguration | undefined,
    get: () => Promise.resolve(store.value),
    put: (v: StoredConfiguration) => {
      store.value = structuredClone(v);
      return Promise.resolve();
    },
  };
  return store;
}

function setup(options: { failing?: Set<string> } = {}) {
  const clock = new FakeEventClock();
  const { hosts, host, port } = levelHosts(clock, options.failing);
  const store = memoryStore();
  const controller = new ControllerHost({
    levels: port,
    store,
    clock,
    initial: { manifests: manifests(["a", "b"]), serverConcurrencyLimit: 100, mandatoryOnly: true },
  });
  return { clock, hosts, host, controller, store };
}

function limitOf(h: LevelHost, name: string): number {
  return h.snapshot().levels.find((l) => l.name === name)!.currentLimit;
}

Deno.test("the controller moves seats between level objects: a flooded level borrows from an idle one", async () => {
  const { clock, host, controller } = setup();
  await controller.start();
  for (const name of ["a", "b"]) host(name).update(name, controller.levelUpdate());
  const before = { a: limitOf(host("a"), "a"), b: limitOf(host("b"), "b") };
  assert.equal(before.a, before.b);
  const flood = Array.from(
    { length: 120 },
    () => host("a").acquire({ priorityLevel: "a", flowSchema: "a" }),
  );
  await Promise.resolve();
  clock.advance(10_000);
  const adjustment = await controller.adjust();
  assert.equal(controller.stats.adjustments, 1);
  const after = { a: limitOf(host("a"), "a"), b: limitOf(host("b"), "b") };
  assert.ok(after.a > before.a, `a borrowed: ${JSON.stringify({ before, after })}`);
  assert.ok(after.b < before.b, "from b");
  assert.deepEqual(
    adjustment.levels.filter((l) => l.name === "a" || l.name === "b").map((l) => l.currentLimit),
    [after.a, after.b],
  );
  for (const h of [host("a"), host("b")]) h.close();
  await Promise.all(flood);
});

Deno.test("a level object that does not answer keeps its last limits; the others move on", async () => {
  const failing = new Set<string>();
  const { clock, host, controller } = setup({ failing });
  await controller.start();
  for (const name of ["a", "b"]) host(name).update(name, controller.levelUpdate());
  const bBefore = limitOf(host("b"), "b");
  failing.add("b");
  const flood = Array.from(
    { length: 120 },
    () => host("a").acquire({ priorityLevel: "a", flowSchema: "a" }),
  );
  await Promise.resolve();
  clock.advance(10_000);
  await controller.adjust();
  assert.equal(controller.stats.failedCalls, 2, "collect and push to b");
  assert.equal(limitOf(host("b"), "b"), bBefore, "b kept what it had");
  assert.ok(limitOf(host("a"), "a") > bBefore);
  for (const h of [host("a"), host("b")]) h.close();
  await Promise.all(flood);
});

Deno.test("a stalled level object is given up on after the call timeout", async () => {
  const clock = new FakeEventClock();
  const controller = new ControllerHost({
    clock,
    callTimeoutMs: 500,
    levels: () => ({
      collect: () => new Promise(() => {}),
      update: () => new Promise(() => {}),
    }),
  });
  await controller.start();
  const done = controller.adjust();
  for (let i = 0; i < 4; i++) {
    await settle(20);
    clock.advance(500);
  }
  await done;
  assert.equal(controller.stats.failedCalls, 16, "the 8 built-in levels: collect and push each");
});

Deno.test("configuration: stored and versioned, refused whole when invalid, removed levels drain", async () => {
  const { host, controller, store } = setup();
  await controller.start();
  assert.equal(controller.configuration.version, 1);
  assert.equal(store.value, undefined, "the initial configuration is not stored");
  await assert.rejects(
    controller.setConfiguration({ manifests: "kind: PriorityLevelConfiguration\nmetadata: {}" }),
    /Configuration/,
  );
  assert.equal(controller.configuration.version, 1);
  assert.equal(store.value, undefined);

  for (const name of ["a", "b"]) host(name).update(name, controller.levelUpdate());
  const held = await host("b").acquire({ priorityLevel: "b", flowSchema: "b" });
  const next = await controller.setConfiguration({
    manifests: manifests(["a"]),
    serverConcurrencyLimit: 100,
    mandatoryOnly: true,
  });
  assert.equal(next.version, 2);
  assert.equal((await store.get())?.version, 2);
  assert.equal(host("a").version, 2);
  assert.equal(host("b").version, 2, "the removed level heard it too");
  assert.ok(host("b").snapshot().levels[0]!.quiescing, "and drains");

  // A controller restarted from the store picks up version 2.
  const again = new ControllerHost({ levels: () => ({} as never), store });
  await again.start();
  assert.equal(again.configuration.version, 2);
  assert.deepEqual(again.configuration.configuration, next.configuration);
  assert.ok(held.admitted);
  host("b").release(held.seatId);
  for (const h of [host("a"), host("b")]) h.close();
});
