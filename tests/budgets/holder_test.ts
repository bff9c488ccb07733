/**
 * Budget holders on the fake clock, sharing a memory store: the first
 * seats, fair shares across holders, seats moving only once drained, the
 * lease and the policies when the store is down, a refused credential, and
 * store operations per period.
 */

import assert from "node:assert/strict";
import { BudgetHolder } from "../../src/budgets/holder.ts";
import { MemoryBudgetStore } from "../../src/budgets/memory_store.ts";
import { StoreRefusedError } from "../../src/budgets/store.ts";
import type { Admission } from "../../src/coordinator/types.ts";
import { dumpPriorityLevels } from "../../src/observe/dumps.ts";
import { configOf, exempt, limited } from "../_helpers/coordinator_config.ts";
import { settle } from "../_helpers/settle.ts";
import {
  CONFIG,
  done,
  inUse,
  LIMIT,
  release,
  request,
  run,
  setup,
  steadyLoad,
  track,
  WINDOW_MS,
} from "./_holders.ts";

Deno.test("holder: no seat before its first settle; a waiting request gets its seats within a period", async () => {
  const s = setup(1);
  const a = track(s.holders[0]!.acquire(request()));
  await settle(20);
  await s.holders[0]!.ready();
  // The first settle ran with no demand: nothing claimed; the waiting request settles again.
  await run(s, 1_000);
  const outcome = a.outcome as Admission | "pending";
  assert.ok(outcome !== "pending" && outcome.admitted, "admitted within a period");
  const [budget] = s.holders[0]!.budgets();
  assert.equal(budget!.mode, "budget");
  assert.ok(budget!.capacity >= 1);
  release(a);
  done(s);
});

Deno.test("holder: the exempt level has no budget and admits at once", async () => {
  const s = setup(1, { policy: "closed" });
  s.store.down = true;
  const a = await s.holders[0]!.acquire(request({ priorityLevel: "exempt", flowHash: null }));
  assert.ok(a.admitted);
  a.seat.release();
  done(s);
});

Deno.test("holders: two floods share the level equally, and never exceed it together", async () => {
  const s = setup(2);
  const loads = s.holders.map((h) => steadyLoad(s, h, 20, 100));
  let peak = 0;
  for (let t = 0; t < 6_000; t += 10) {
    for (const l of loads) l.step();
    await run(s, 10);
    peak = Math.max(peak, inUse(s));
  }
  assert.ok(peak <= LIMIT, `peak ${peak}`);
  assert.deepEqual(s.holders.map((h) => h.budgets()[0]!.capacity), [2, 2], "max-min fair");
  // Each shows the ledger's lines as it last wrote them, its own marked.
  const lines = s.holders[0]!.budgets()[0]!.holders!;
  assert.deepEqual(lines.map((l) => [l.id, l.self, l.claim]), [["h0", true, 2], ["h1", false, 2]]);
  assert.equal(inUse(s), LIMIT, "the level is full");
  for (const l of loads) l.stop();
  done(s);
});

Deno.test("holders: an idle holder's seats flow to the busy one; a mouse gets its demand", async () => {
  const s = setup(3);
  const [elephant, mouse] = [
    steadyLoad(s, s.holders[0]!, 40, 100),
    steadyLoad(s, s.holders[1]!, 1, 100),
  ];
  let peak = 0;
  for (let t = 0; t < 6_000; t += 10) {
    elephant.step();
    mouse.step();
    await run(s, 10);
    peak = Math.max(peak, inUse(s));
  }
  assert.ok(peak <= LIMIT, `peak ${peak}`);
  const capacities = s.holders.map((h) => h.budgets()[0]!.capacity);
  assert.deepEqual(capacities, [3, 1, 0], "the mouse its one seat, the idle holder none");
  elephant.stop();
  mouse.stop();
  done(s);
});

Deno.test("holders: seats move to a new holder only once the first has drained to its share", async () => {
  const s = setup(2);
  const [a, b] = s.holders as [BudgetHolder, BudgetHolder];
  const held: Admission[] = [];
  for (let i = 0; i < LIMIT; i++) void a.acquire(request()).then((x) => held.push(x));
  await run(s, WINDOW_MS + 1_000);
  assert.equal(a.budgets()[0]!.capacity, LIMIT, "a alone takes the level");
  assert.equal(held.length, LIMIT);
  // b wants seats: its share is 2, but a holds all 4 seats.
  const waiting = [track(b.acquire(request())), track(b.acquire(request()))];
  let peak = 0;
  for (let t = 0; t < 3_000; t += 10) {
    await run(s, 10);
    peak = Math.max(peak, inUse(s));
  }
  assert.ok(peak <= LIMIT);
  assert.equal(a.budgets()[0]!.capacity, 2, "a's capacity fell to its share at once");
  assert.equal(a.budgets()[0]!.claim, LIMIT, "but its claim covers its 4 seats in use");
  assert.ok(waiting.every((w) => w.outcome === "pending"), "b waits: nothing is free");
  // a's requests end: its claim drains to 2 at its next settle, then b gets them.
  for (const x of held) if (x.admitted) x.seat.release();
  await run(s, 2_500);
  assert.ok(waiting.every((w) => w.outcome !== "pending" && w.outcome.admitted), "b served");
  for (const w of waiting) {
    if (w.outcome !== "pending" && w.outcome.admitted) w.outcome.seat.release();
  }
  done(s);
});

Deno.test("holder: the store down, it keeps its seats until its lease ends, then its policy", async () => {
  for (const policy of ["closed", "local", "open"] as const) {
    const s = setup(1, { policy, fallbackFraction: 0.5 });
    const h = s.holders[0]!;
    const first = track(h.acquire(request()));
    await run(s, WINDOW_MS + 1_000);
    assert.ok(first.outcome !== "pending" && first.outcome.admitted);
    const leaseEnds = h.budgets()[0]!.leaseEndsAt!;
    s.store.down = true;
    await run(s, leaseEnds - s.clock.wallNow() - 20);
    assert.equal(h.budgets()[0]!.mode, "budget", `${policy}: still on its lease`);
    await run(s, 40);
    const budget = h.budgets()[0]!;
    assert.equal(budget.mode, policy);
    assert.equal(
      budget.capacity,
      policy === "closed" ? 0 : policy === "local" ? 2 : Number.MAX_SAFE_INTEGER,
    );
    assert.ok(s.errors.length > 0, "the failures were reported");
    // The store comes back: a budget again.
    s.store.down = false;
    await run(s, 1_000);
    assert.equal(h.budgets()[0]!.mode, "budget", `${policy}: back on a budget`);
    release(first);
    done(s);
  }
});

Deno.test("holder: with the store down from the start, the policy applies at once; no request hangs", async () => {
  const s = setup(1, { policy: "closed" });
  s.store.down = true;
  // Made before the first settle failed: it waits, up to its wait limit.
  const early = track(s.holders[0]!.acquire(request({ waitLimitMs: 2_000 })));
  await run(s, 100);
  // Made once the policy is in force: refused at once.
  const late = await s.holders[0]!.acquire(request());
  assert.deepEqual(late, { admitted: false, reason: "unavailable", retryAfterSeconds: 1 });
  await run(s, 2_000);
  const outcome = early.outcome as Admission | "pending";
  assert.equal(outcome !== "pending" && !outcome.admitted && outcome.reason, "time-out");
  done(s);
});

Deno.test("holder: a refused credential rejects ready() and every acquire; no policy answers", async () => {
  const s = setup(1, { policy: "open" });
  s.store.refuse = true;
  const waiting = s.holders[0]!.acquire(request());
  await assert.rejects(s.holders[0]!.ready(), StoreRefusedError);
  await assert.rejects(s.holders[0]!.acquire(request()), /refused this holder's credential/);
  assert.deepEqual(await waiting, { admitted: false, reason: "unavailable", retryAfterSeconds: 1 });
  done(s);
});

Deno.test("holder: at steady state, one read and one write per level per period, whatever the load", async () => {
  const s = setup(1);
  const h = s.holders[0]!;
  await run(s, WINDOW_MS + 1_000);
  const outcomes: { outcome: Admission | "pending" }[] = [];
  // A steady load: 50 requests every 100 ms, each released 50 ms later.
  const before = { reads: s.store.reads, writes: s.store.writes };
  for (let t = 0; t < 10_000; t += 100) {
    for (let i = 0; i < 50; i++) {
      const o = track(h.acquire(request()));
      outcomes.push(o);
      void (async () => {
        while (o.outcome === "pending") await settle(1);
      })();
    }
    await run(s, 50);
    for (const o of outcomes.splice(0)) {
      if (o.outcome !== "pending" && o.outcome.admitted) o.outcome.seat.release();
    }
    await run(s, 50);
  }
  const reads = s.store.reads - before.reads, writes = s.store.writes - before.writes;
  assert.ok(
    reads <= 2 * 10 + 1 && writes <= 2 * 10 + 1,
    `${reads} reads, ${writes} writes in 10 s`,
  );
  h.close();
  await settle(20);
  done(s);
});

Deno.test("holder: options are checked", () => {
  const store = new MemoryBudgetStore();
  assert.throws(() => new BudgetHolder(CONFIG, {} as never), TypeError);
  assert.throws(() => new BudgetHolder(CONFIG, { store, periodMs: 0 }), RangeError);
  assert.throws(() => new BudgetHolder(CONFIG, { store, periodMs: "1" as never }), TypeError);
  assert.throws(() => new BudgetHolder(CONFIG, { store, leaseMs: 500 }), /longer than periodMs/);
  assert.throws(() => new BudgetHolder(CONFIG, { store, policy: "maybe" as never }), TypeError);
  assert.throws(() => new BudgetHolder(CONFIG, { store, fallbackFraction: 2 }), RangeError);
});

Deno.test("holders after their store forgot: the claims come back first, and nobody grows for a window", async () => {
  const warnings: string[] = [];
  const s = setup(2, { onWarning: (m) => warnings.push(m) });
  const [a, b] = s.holders as [BudgetHolder, BudgetHolder];
  await run(s, WINDOW_MS + 1_000); // past the first window: both hold budgets
  const held: Admission[] = [];
  for (let i = 0; i < LIMIT; i++) void a.acquire(request()).then((x) => held.push(x));
  await run(s, 1_500);
  assert.equal(held.length, LIMIT, "a holds every seat");
  warnings.length = 0;
  s.store.memory.forget(); // restarted without its data, while a's lease runs
  const waiting = track(b.acquire(request()));
  await run(s, 3_900);
  assert.equal(waiting.outcome, "pending", "b takes no seat a may still use");
  assert.ok(inUse(s) <= LIMIT);
  const ledger = s.store.memory.peek("work")!.ledger;
  assert.equal(ledger.holders.h0?.claim, LIMIT, "a wrote its claim back");
  assert.notEqual(ledger.recovery, undefined, "under a recovery mark");
  assert.ok(
    warnings.some((w) => /forgot the ledger|no ledger/.test(w)),
    `the recovery is reported: ${warnings.join("; ")}`,
  );
  // a's requests end; once b has known the mark for its window, b gets its seat.
  for (const x of held) if (x.admitted) x.seat.release();
  await run(s, 1_500);
  const outcome = waiting.outcome as Admission | "pending";
  assert.ok(outcome !== "pending" && outcome.admitted, "b served after the window");
  release(waiting);
  done(s);
});

Deno.test("holder: its dumps show each level's share beside the level's limit; its metrics too", async () => {
  const s = setup(1);
  const h = s.holders[0]!;
  const a = track(h.acquire(request()));
  await run(s, 1_500);
  const snapshot = h.snapshot();
  const work = snapshot.levels.find((l) => l.name === "work")!;
  assert.equal(work.budget?.mode, "budget");
  assert.equal(work.budget?.limit, LIMIT);
  assert.equal(work.currentLimit, work.budget?.capacity, "the queue set's limit is the share");
  assert.equal(snapshot.levels.find((l) => l.name === "exempt")!.budget, undefined);
  const text = dumpPriorityLevels(snapshot);
  const [header, ...rows] = text.trim().split("\n").map((l) => l.split(/,\s*/));
  assert.deepEqual(header!.slice(-4), ["LevelLimit", "BudgetSeats", "BudgetClaim", "BudgetMode"]);
  const workRow = rows.find((r) => r[0] === "work")!;
  assert.deepEqual(workRow.slice(-4), [
    String(LIMIT),
    String(work.budget!.capacity),
    String(work.budget!.claim),
    "budget",
  ]);
  const metrics = h.metrics.registry.expose();
  assert.match(
    metrics,
    new RegExp(`^apf_budget_seats\\{kind="limit",priority_level="work"\\} ${LIMIT}$`, "m"),
  );
  assert.match(metrics, /^apf_budget_policy_in_force\{priority_level="work"\} 0$/m);
  assert.match(metrics, /^apf_budget_store_operations_total\{result="settled"\} [1-9]/m);
  assert.match(
    metrics,
    /^apiserver_flowcontrol_dispatched_requests_total\{flow_schema="fs",priority_level="work"\} 1$/m,
  );
  release(a);
  done(s);
});

Deno.test("holder: a request on a level idle for a while settles it early, not at the next period", async () => {
  const s = setup(1);
  const h = s.holders[0]!;
  await run(s, 3_000);
  assert.equal(h.budgets()[0]!.capacity, 0, "idle: no seat kept");
  const a = track(h.acquire(request()));
  await run(s, 520);
  const outcome = a.outcome as Admission | "pending";
  assert.ok(outcome !== "pending" && outcome.admitted, "admitted within half a period");
  release(a);
  done(s);
});

Deno.test("holder: an id that a ledger cannot hold is refused", () => {
  const store = new MemoryBudgetStore();
  for (const id of ["", "__proto__", 7]) {
    assert.throws(() => new BudgetHolder(CONFIG, { store, id: id as never }), TypeError);
  }
});

Deno.test("holders: a new demand gets its fair share within two periods; idle seats follow", async () => {
  const s = setup(2);
  const [a, b] = s.holders as [BudgetHolder, BudgetHolder];
  const floodA = steadyLoad(s, a, 20, 100);
  for (let t = 0; t < 4_000; t += 10) {
    floodA.step();
    await run(s, 10);
  }
  assert.equal(a.budgets()[0]!.capacity, LIMIT, "a alone holds the level");
  // b starts flooding: it writes its demand (at once, or half a period after its last settle);
  // a sees it at its next round, lowers its capacity and writes its lower claim once its seats
  // have drained (a tenth of a period later); b, whose requests wait, settles every half period
  // meanwhile and takes the seats: its fair share, 2, within two periods (1.5 here, where the
  // holders settle in step).
  const floodB = steadyLoad(s, b, 20, 100);
  let tookMs = -1;
  for (let t = 0; t < 4_000; t += 10) {
    floodA.step();
    floodB.step();
    await run(s, 10);
    if (tookMs < 0 && b.budgets()[0]!.capacity >= LIMIT / 2) tookMs = t + 10;
  }
  assert.ok(tookMs >= 0 && tookMs <= 2_000, `b had its share after ${tookMs} ms`);
  // a stops: b has the whole level once a has written no demand (its demand is its peak since
  // its last settle: at its second round after it stopped) and b has settled since: at most
  // three periods (two here).
  floodA.stop();
  tookMs = -1;
  for (let t = 0; t < 4_000; t += 10) {
    floodB.step();
    await run(s, 10);
    if (tookMs < 0 && b.budgets()[0]!.capacity === LIMIT) tookMs = t + 10;
  }
  assert.ok(tookMs >= 0 && tookMs <= 3_000, `b had the whole level after ${tookMs} ms`);
  floodB.stop();
  done(s);
});

Deno.test("holder: configure adds a level (seats from its first settle, at once) and lets a removed one go once idle", async () => {
  const s = setup(1);
  const h = s.holders[0]!;
  const held = track(h.acquire(request()));
  await run(s, 1_500);
  assert.ok(held.outcome !== "pending" && held.outcome.admitted);
  const queuing = { queues: 8, handSize: 2, queueLengthLimit: 50 };
  const next = configOf(8, [exempt(), limited("batch", { shares: 5, queuing })]);
  // An invalid configuration changes nothing.
  const bad = {
    ...next,
    priorityLevels: next.priorityLevels.map((pl) =>
      pl.name === "batch" ? { ...pl, queuing: { ...queuing, queues: 1 } } : pl
    ),
  };
  const before = h.budgets();
  assert.throws(() => h.configure(bad), RangeError);
  assert.deepEqual(h.budgets(), before);

  h.configure(next);
  const batch = track(h.acquire(request({ priorityLevel: "batch" })));
  await run(s, 20);
  assert.ok(
    batch.outcome !== "pending" && batch.outcome.admitted,
    "the new level settled at once",
  );
  assert.ok(h.budgets().some((b) => b.level === "work"), "work still holds a seat");
  release(held);
  await run(s, 1_100);
  assert.deepEqual(
    h.budgets().map((b) => b.level).sort(),
    ["batch", "catch-all"],
    "work let go once idle",
  );
  release(batch);
  h.close();
  assert.throws(() => h.configure(next), TypeError);
  done(s);
});

Deno.test("holder: a conflicting write is tried again at once when the settle changes the claim, not for a renewal", async () => {
  // A lease of 5 s outlasts the next round by more than a period and the store's timeout.
  const s = setup(1, { leaseMs: 5_000 });
  const h = s.holders[0]!;
  const held = [track(h.acquire(request())), track(h.acquire(request()))];
  await run(s, 2_500); // rounds at 1 s and 2 s: the claim is steady
  const claim = h.budgets()[0]!.claim;
  const ops = () => ({ reads: s.store.reads, writes: s.store.writes });
  // A renewal that conflicts: one read, one write, no retry; the lease still runs.
  let before = ops();
  s.store.conflicts = 2; // both limited levels' renewals conflict
  await run(s, 1_000);
  assert.deepEqual(ops(), { reads: before.reads + 2, writes: before.writes + 2 });
  assert.equal(h.stats.conflicts, 2);
  assert.equal(h.budgets()[0]!.mode, "budget");
  assert.equal(h.budgets()[0]!.claim, claim);
  // A settle that changes the claim (more demand) and conflicts is tried again at once.
  const more = Array.from({ length: 2 }, () => track(h.acquire(request())));
  before = ops();
  s.store.conflicts = 1;
  await run(s, 1_000);
  const after = ops();
  assert.ok(after.writes - before.writes >= 3, `${after.writes - before.writes} writes`);
  assert.ok(h.budgets()[0]!.claim > claim, "the higher claim was written");
  for (const t of [...held, ...more]) release(t);
  done(s);
});
