import assert from "node:assert/strict";
import { bootstrapConfiguration } from "../../src/config/bootstrap.ts";
import { effectiveConfiguration } from "../../src/config/effective.ts";
import { BorrowingController } from "../../src/coordinator/borrowing_controller.ts";
import { EmbeddedCoordinator } from "../../src/coordinator/embedded.ts";
import type { Seat } from "../../src/coordinator/types.ts";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import { configOf, exempt, limited } from "../_helpers/coordinator_config.ts";

function currentOf(c: EmbeddedCoordinator): Record<string, number> {
  return Object.fromEntries(c.snapshot().levels.map((l) => [l.name, l.currentLimit]));
}

/**
 * The same workload on one embedded coordinator (timer borrowing) and on one
 * partial coordinator per level driven by a BorrowingController (the
 * Cloudflare topology): the current limits agree at every adjustment.
 */
Deno.test("a controller over one partial coordinator per level allocates exactly like the embedded one", async () => {
  const config = configOf(100, [
    exempt(),
    limited("a", {
      shares: 30,
      lendablePercent: 50,
      queuing: { queues: 8, handSize: 2, queueLengthLimit: 50 },
    }),
    limited("b", { shares: 50, lendablePercent: 70, borrowingLimitPercent: 100 }),
    limited("c", {
      shares: 20,
      lendablePercent: 0,
      queuing: { queues: 1, handSize: 1, queueLengthLimit: 100 },
    }),
  ]);
  const clock = new FakeEventClock();
  const whole = new EmbeddedCoordinator(config, { clock });
  const names = config.priorityLevels.map((pl) => pl.name);
  const parts = new Map(names.map((name) => [
    name,
    new EmbeddedCoordinator(config, { clock, levels: [name], borrowing: "external" }),
  ]));
  const controller = new BorrowingController(config);
  const push = () => {
    for (const part of parts.values()) part.setCurrentLimits(controller.currentLimits());
  };
  push();
  const partsCurrent = () => {
    const all: Record<string, number> = {};
    for (const part of parts.values()) Object.assign(all, currentOf(part));
    return all;
  };
  assert.deepEqual(partsCurrent(), currentOf(whole));

  // Level a floods (holds 120 seats' worth of demand); b and c use a little.
  const held: Seat[] = [];
  let flooding = true;
  const load = async (level: string, n: number) => {
    for (let i = 0; i < n; i++) {
      const req = { priorityLevel: level, flowSchema: level, flowHash: { hi: i, lo: 7 * i } };
      for (const c of [whole, parts.get(level)!]) {
        void c.acquire(req).then((a) => {
          if (!a.admitted) return;
          if (flooding || level === "c") held.push(a.seat);
          else a.seat.release();
        });
      }
    }
    await Promise.resolve();
  };
  await load("a", 120);
  await load("b", 3);
  await load("exempt", 4);
  const history: Array<Record<string, number>> = [];
  for (let period = 1; period <= 8; period++) {
    clock.advance(10_000); // the embedded coordinator adjusts on its timer
    controller.adjust([...parts.values()].flatMap((p) => p.collectSeatDemand()), clock.now());
    push();
    await Promise.resolve();
    assert.deepEqual(partsCurrent(), currentOf(whole), `period ${period}`);
    assert.deepEqual(controller.currentLimits(), currentOf(whole));
    history.push(currentOf(whole));
    if (period === 4) {
      // a's flood ends (each seat goes back once granted); c gets busy.
      flooding = false;
      for (const s of held.splice(0)) s.release();
      await load("c", 60);
    }
  }
  assert.ok(history[0]!.a! > 30, `a borrowed: ${JSON.stringify(history[0])}`);
  assert.ok(history[7]!.a! < history[3]!.a!, `a gave back: ${JSON.stringify(history)}`);
  assert.ok(history[7]!.c! > history[3]!.c!, "to c");
  whole.close();
  for (const p of parts.values()) p.close();
});

Deno.test("a removed level keeps its share until its object reports it idle", () => {
  const config = configOf(100, [limited("a", { shares: 50 }), limited("b", { shares: 50 })]);
  const controller = new BorrowingController(config);
  const initial = controller.currentLimits();
  assert.equal(initial.a, initial.b);
  controller.configure(configOf(100, [limited("a", { shares: 50 })]));
  const demand = { durationMs: 10_000, average: 1, deviation: 0, min: 1, max: 1 };
  controller.adjust([{ level: "b", demand, idle: false }], 10_000);
  assert.deepEqual(controller.quiescing(), ["b"]);
  assert.equal(controller.currentLimits().a, initial.a, "b still holds its share");
  controller.adjust([{ level: "b", demand, idle: true }], 20_000);
  assert.deepEqual(controller.quiescing(), []);
  assert.deepEqual(Object.keys(controller.currentLimits()).sort(), ["a", "catch-all", "exempt"]);
  assert.ok(controller.currentLimits().a! > initial.a!, "a got b's share");
});

Deno.test("the BorrowingController example: a flooded level borrows", () => {
  const controller = new BorrowingController(effectiveConfiguration(bootstrapConfiguration()));
  const before = controller.currentLimits()["workload-low"]!;
  controller.adjust([{
    level: "workload-low",
    demand: { durationMs: 10_000, average: 200, deviation: 20, min: 150, max: 260 },
    idle: false,
  }], 10_000);
  assert.ok(controller.currentLimits()["workload-low"]! > before);
  assert.equal(before, 56);
});

Deno.test("a partial coordinator: other levels unavailable, external borrowing only, limits checked", async () => {
  const config = configOf(10, [limited("a", { shares: 1 }), limited("b", { shares: 1 })]);
  const clock = new FakeEventClock();
  assert.throws(
    () => new EmbeddedCoordinator(config, { clock, levels: ["a"] }),
    /holding some levels only needs borrowing: "external"/,
  );
  const part = new EmbeddedCoordinator(config, { clock, levels: ["a"], borrowing: "external" });
  assert.deepEqual(part.snapshot().levels.map((l) => l.name), ["a"]);
  const other = await part.acquire({ priorityLevel: "b", flowSchema: "b" });
  assert.equal(!other.admitted && other.reason, "unavailable");
  assert.throws(() => part.adjustLimits(), /a controller does/);
  assert.throws(() => part.setCurrentLimits({ a: 3, b: -1 }), /integer >= 0, got -1/);
  assert.equal(currentOf(part).a, 2, "nothing changed");
  part.setCurrentLimits({ a: 3, zzz: 9 });
  assert.equal(currentOf(part).a, 3);
  clock.advance(60_000);
  assert.equal(currentOf(part).a, 3, "no timer of its own");
  part.close();
});
