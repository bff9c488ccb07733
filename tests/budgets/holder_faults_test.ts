/**
 * Budget holders where real fleets break leases, on the fake clock: clocks
 * ten minutes apart, a process frozen past its lease (its timers run late,
 * or all at once on resume), a store that forgets, and a forged line.
 * The model (`ledger_test.ts`) checks the rule under every interleaving;
 * these check that `BudgetHolder` runs it.
 */

import assert from "node:assert/strict";
import { BudgetHolder, type BudgetHolderOptions } from "../../src/budgets/holder.ts";
import type { Admission } from "../../src/coordinator/types.ts";
import { settle } from "../_helpers/settle.ts";
import {
  CONFIG,
  done,
  inUse,
  LIMIT,
  release,
  request,
  run,
  type Setup,
  setup,
  ShiftedClock,
  steadyLoad,
  TestStore,
  track,
  WINDOW_MS,
} from "./_holders.ts";

/**
 * One holder on a clock of its own that a test can shift (a process frozen: its clock jumps, its
 * timers have not run), with `options` over the defaults.
 */
function shiftedHolder(
  options: Partial<BudgetHolderOptions> = {},
): { s: Setup; h: BudgetHolder; shifted: ShiftedClock } {
  let shifted: ShiftedClock | undefined;
  const s = setup(1, (clock) => ({ clock: shifted = new ShiftedClock(clock, 0), ...options }));
  return { s, h: s.holders[0]!, shifted: shifted! };
}

Deno.test("holders on clocks ten minutes apart share the level and never exceed it", async () => {
  const offsets = [-600_000, 0, 600_000];
  const s = setup(3, (clock, i) => ({ clock: new ShiftedClock(clock, offsets[i]!) }));
  const loads = s.holders.map((h) => steadyLoad(s, h, 20, 100));
  let peak = 0;
  for (let t = 0; t < 12_000; t += 10) {
    for (const l of loads) l.step();
    await run(s, 10);
    peak = Math.max(peak, inUse(s));
  }
  assert.ok(peak <= LIMIT, `peak ${peak}`);
  const served = loads.map((l) => l.served);
  const total = served.reduce((a, b) => a + b, 0);
  for (const [i, n] of served.entries()) {
    assert.ok(n >= 0.15 * total, `holder ${i} (clock ${offsets[i]} ms) served ${n} of ${total}`);
  }
  assert.deepEqual(
    s.holders.map((h) => h.budgets()[0]!.capacity).sort(),
    [1, 1, 2],
    "max-min fair",
  );
  for (const l of loads) l.stop();
  done(s);
});

Deno.test("holder frozen past its lease: on resume its timers stop the budget and it settles before any policy", async () => {
  const s = setup(1, { policy: "local", fallbackFraction: 0.5 });
  const h = s.holders[0]!;
  const held: Admission[] = [];
  for (let i = 0; i < LIMIT; i++) void h.acquire(request()).then((a) => held.push(a));
  await run(s, WINDOW_MS + 1_000);
  assert.equal(held.length, LIMIT);
  const patient = () => track(h.acquire(request({ waitLimitMs: 30_000 })));
  const waiting = [patient(), patient()];
  await settle(20);
  // Frozen 10 s: on resume every timer due fires back to back, before any I/O answers.
  s.clock.advance(10_000);
  const budget = h.budgets()[0]!;
  assert.equal(budget.mode, "budget", "no policy: the store has not failed");
  assert.equal(budget.capacity, 0, "but no admission on the ended lease");
  for (const a of held) if (a.admitted) a.seat.release();
  assert.ok(waiting.every((w) => w.outcome === "pending"), "the freed seats wait for the settle");
  await settle(50); // the store answers
  assert.equal(h.budgets()[0]!.mode, "budget");
  assert.ok(h.budgets()[0]!.capacity >= 2);
  await settle(20);
  assert.ok(waiting.every((w) => w.outcome !== "pending" && w.outcome.admitted), "then admitted");
  for (const w of waiting) release(w);
  done(s);
});

Deno.test("holder frozen past its lease: an acquire before its timers ran admits nothing on the ended lease", async () => {
  const { s, h, shifted } = shiftedHolder();
  const first = track(h.acquire(request()));
  await run(s, WINDOW_MS + 1_000);
  assert.ok(first.outcome !== "pending" && first.outcome.admitted);
  // Its clock jumps 10 s; its timers have not run.
  shifted.offset += 10_000;
  const late = track(h.acquire(request()));
  await settle(1);
  assert.equal(late.outcome, "pending", "not admitted at once on the ended lease");
  assert.equal(h.budgets()[0]!.capacity, 0);
  await settle(50); // the settle it started answers
  const outcome = late.outcome as Admission | "pending";
  assert.ok(outcome !== "pending" && outcome.admitted, "admitted on the renewed budget");
  release(first);
  release(late);
  done(s);
});

Deno.test("holder frozen past its lease: a seat admitted before says it is no longer held, even once the lease is renewed", async () => {
  const { s, h, shifted } = shiftedHolder();
  const first = track(h.acquire(request()));
  await run(s, WINDOW_MS + 1_000);
  assert.ok(first.outcome !== "pending" && first.outcome.admitted);
  const seat = first.outcome.seat;
  assert.equal(seat.stillHeld?.(), true, "held while its lease runs");
  await run(s, 5_000); // renewed every period meanwhile
  assert.equal(seat.stillHeld?.(), true, "a renewed lease is the same lease");
  // Frozen 10 s: its clock jumps, its timers have not run. The seat is asked before the timers.
  shifted.offset += 10_000;
  assert.equal(seat.stillHeld?.(), false, "the lease it was admitted on lapsed");
  assert.equal(h.budgets()[0]!.capacity, 0, "asking found the lapse: no admission on it");
  await settle(50); // the settle it started answers: a new lease
  assert.equal(h.budgets()[0]!.mode, "budget");
  assert.ok(h.budgets()[0]!.capacity >= 1);
  assert.equal(seat.stillHeld?.(), false, "not held on the new lease either");
  const after = track(h.acquire(request()));
  await settle(5);
  assert.ok(after.outcome !== "pending" && after.outcome.admitted);
  assert.equal(after.outcome.seat.stillHeld?.(), true, "a seat of the new lease is held");
  assert.equal(seat.release(), true, "the lapsed seat is still given back once");
  release(after);
  done(s);
});

Deno.test("holder: the policy applies only once a store operation started after the lease's end has failed", async () => {
  const s = setup(1, { policy: "local", fallbackFraction: 0.5 });
  const h = s.holders[0]!;
  const first = track(h.acquire(request()));
  await run(s, WINDOW_MS + 1_000);
  s.store.down = true;
  await run(s, 3_100); // the lease (3 s) ends; the settle after it fails at once
  assert.equal(h.budgets()[0]!.mode, "local");
  assert.equal(h.budgets()[0]!.capacity, 2);
  assert.ok(first.outcome !== "pending" && first.outcome.admitted);
  assert.equal(first.outcome.seat.stillHeld?.(), false, "a seat of the budget: not the policy's");
  s.store.down = false;
  await run(s, 1_100);
  assert.equal(h.budgets()[0]!.mode, "budget", "back on a budget with the store");
  release(first);
  done(s);
});

Deno.test("holders: a forged line holds the level for one window, is reported once and dropped; the level is served again though the forger keeps writing", async () => {
  const warnings: string[] = [];
  const s = setup(2, (_, i) => ({ onWarning: (m) => i === 0 && warnings.push(m) }));
  const loads = s.holders.map((h) => steadyLoad(s, h, 10, 100));
  const step = async (ms: number) => {
    for (let t = 0; t < ms; t += 10) {
      for (const l of loads) l.step();
      await run(s, 10);
    }
  };
  await step(WINDOW_MS + 2_000);
  const forge = () => {
    const stored = s.store.memory.peek("work")!.ledger;
    s.store.memory.put("work", {
      ...stored,
      holders: {
        ...stored.holders,
        forger: {
          claim: 1e9,
          demand: 0,
          limit: 1e9,
          beat: Math.floor(s.clock.now()),
          leaseMs: 2_000,
          drainMs: 0,
          expiresAt: 9.4e14,
        },
      },
    });
  };
  forge();
  const servedAt = loads.map((l) => l.served);
  for (let t = 0; t < WINDOW_MS + 2_000; t += 500) {
    await step(500);
    forge(); // it keeps writing
  }
  assert.equal(warnings.length, 1, warnings.join("\n"));
  assert.match(
    warnings[0]!,
    /budget holder h0: level "work": the store memory holds a line no holder could write, "forger": its claim \(1000000000\) is above the level's most \(12\); it counts as a dead holder's/,
  );
  const before = loads.map((l) => l.served);
  await step(2_000);
  assert.ok(
    loads.every((l, i) => l.served - before[i]! > 10),
    `served again: ${loads.map((l, i) => l.served - before[i]!)}, ${servedAt}`,
  );
  await step(1_100); // a write after the forger's last line
  assert.equal(s.store.memory.peek("work")!.ledger.holders.forger, undefined, "not written back");
  for (const l of loads) l.stop();
  done(s);
});

Deno.test("holder: options are checked, unknown names included", () => {
  const store = new TestStore();
  assert.throws(
    () => new BudgetHolder(CONFIG, { store, skewMs: 1_000 } as never),
    /Cannot create the budget holder: unknown option "skewMs"/,
  );
  assert.throws(
    () => new BudgetHolder(CONFIG, { store, leaseMs: 3_600_001 }),
    /leaseMs must be a number from 1 to 3600000, got 3600001/,
  );
  assert.throws(
    () => new BudgetHolder(CONFIG, { store, driftMarginMs: -1 }),
    /driftMarginMs must be a number >= 0, got -1/,
  );
});

for (const releases of [1, 3]) {
  Deno.test(`holder frozen past its lease: ${releases} waiting requests that ${releases} releases admit in one turn before the timers ran are refused, and nothing rides the ended lease`, async () => {
    const { s, h, shifted } = shiftedHolder();
    const held: Admission[] = [];
    for (let i = 0; i < LIMIT; i++) void h.acquire(request()).then((a) => held.push(a));
    await run(s, WINDOW_MS + 1_000);
    assert.equal(held.length, LIMIT);
    const waiting = Array.from(
      { length: releases },
      () => track(h.acquire(request({ waitLimitMs: 30_000 }))),
    );
    await settle(20);
    // Frozen 10 s; on resume responses come in at once (seats released in one turn, before the
    // first waiting request's admission is looked at), before any timer runs.
    shifted.offset += 10_000;
    for (const a of held.slice(0, releases)) if (a.admitted) a.seat.release();
    await settle(5);
    for (const w of waiting) {
      assert.deepEqual(w.outcome, { admitted: false, reason: "unavailable", retryAfterSeconds: 1 });
    }
    assert.equal(inUse(s), LIMIT - releases, "the seats they were given went back at once");
    assert.equal(h.budgets()[0]!.capacity, 0, "no admission on the ended lease");
    await settle(50); // the settle started on the lease's end answers
    const later = track(h.acquire(request()));
    await settle(20);
    assert.ok(later.outcome !== "pending" && later.outcome.admitted, "admitted on a new lease");
    release(later);
    for (const a of held.slice(releases)) if (a.admitted) a.seat.release();
    done(s);
  });
}

Deno.test("holder frozen inside a write: an answer that comes after the lease it grants stops admission, and one more try comes before any policy", async () => {
  const { s, h, shifted } = shiftedHolder({ policy: "local" });
  const first = track(h.acquire(request()));
  await run(s, WINDOW_MS + 1_000);
  assert.ok(first.outcome !== "pending" && first.outcome.admitted);
  const seat = first.outcome.seat;
  // The next write lands, but the process freezes before it reads the answer: 10 s.
  let answer = () => {};
  s.store.answerAfter = new Promise<void>((resolve) => answer = resolve);
  const writes = s.store.writes;
  while (s.store.writes === writes) await run(s, 100);
  shifted.offset += 10_000;
  s.store.answerAfter = null;
  answer();
  await settle(5);
  const budget = h.budgets()[0]!;
  assert.notEqual(budget.mode, "local", "no policy: the store answered");
  assert.equal(seat.stillHeld?.(), false, "the lease it was admitted on lapsed");
  await settle(50); // the one more try answers in time: a new lease
  assert.equal(h.budgets()[0]!.mode, "budget");
  assert.ok(h.budgets()[0]!.capacity >= 1, "a budget again");
  assert.equal(seat.stillHeld?.(), false, "not held on the new lease");
  release(first);
  done(s);
});
