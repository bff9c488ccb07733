/**
 * `apf coordinator` as a budget store: ledgers over HTTP at `/budgets/`,
 * behind the server's token, and budget holders in this process sharing one
 * level through it over loopback.
 */

import assert from "node:assert/strict";
import { BudgetHolder } from "../../src/budgets/holder.ts";
import { HttpBudgetStore } from "../../src/budgets/http_store.ts";
import { StoreRefusedError } from "../../src/budgets/store.ts";
import { serveCoordinator } from "../../src/deno/mod.ts";
import { budgetStoreConformance } from "../_helpers/budget_store_conformance.ts";
import { configOf, exempt, limited } from "../_helpers/coordinator_config.ts";
import { sleep, waitFor } from "../_helpers/real_time.ts";
import type { Admission } from "../../src/coordinator/types.ts";

const TOKEN = "0123456789abcdef-coordinator";

function start() {
  const server = serveCoordinator({ listen: { hostname: "127.0.0.1", port: 0 }, token: TOKEN });
  const url = `http://127.0.0.1:${server.addr.port}/budgets`;
  return { server, url };
}

budgetStoreConformance("apf coordinator", () => {
  const { server, url } = start();
  return { store: new HttpBudgetStore(url, { token: TOKEN }), close: () => server.shutdown() };
});

Deno.test("apf coordinator budgets: a wrong token is refused, and the holder says so", async () => {
  await using running = { ...start(), [Symbol.asyncDispose]: () => running.server.shutdown() };
  const store = new HttpBudgetStore(running.url, { token: "not-the-token-at-all" });
  await assert.rejects(store.read("x"), StoreRefusedError);
  const config = configOf(8, [exempt(), limited("work", { shares: 5 })]);
  const reported: unknown[] = [];
  const holder = new BudgetHolder(config, {
    store,
    periodMs: 100,
    leaseMs: 400,
    onStoreError: (e) => reported.push(e),
  });
  await assert.rejects(holder.ready(), /refused this holder's credential/);
  assert.ok(reported.some((e) => e instanceof StoreRefusedError), "reported");
  holder.close();
});

Deno.test("apf coordinator budgets: three holders on one level never exceed it together", async () => {
  await using running = { ...start(), [Symbol.asyncDispose]: () => running.server.shutdown() };
  const config = configOf(8, [
    exempt(),
    limited("work", { shares: 5, queuing: { queues: 8, handSize: 2, queueLengthLimit: 100 } }),
  ]);
  const limit = config.priorityLevels.find((l) => l.name === "work")!.nominal;
  const holders = [0, 1, 2].map((i) =>
    new BudgetHolder(config, {
      store: new HttpBudgetStore(running.url, { token: TOKEN }),
      id: `holder-${i}`,
      periodMs: 50,
      leaseMs: 300,
      drainMs: 300,
      driftMarginMs: 0,
      storeTimeoutMs: 1_000,
    })
  );
  await Promise.all(holders.map((h) => h.ready()));
  let inUse = 0, peak = 0, flow = 0;
  const served = [0, 0, 0];
  const stop = Date.now() + 1_500;
  // Each holder keeps 10 requests in flight, each holding its seat 20 ms.
  await Promise.all(holders.map(async (h, i) => {
    await Promise.all(Array.from({ length: 10 }, async () => {
      while (Date.now() < stop) {
        const a = await h.acquire({
          priorityLevel: "work",
          flowSchema: "fs",
          flowHash: { hi: i, lo: flow++ },
          waitLimitMs: 2_000,
        });
        if (!a.admitted) continue;
        inUse++;
        peak = Math.max(peak, inUse);
        await sleep(20);
        inUse--;
        a.seat.release();
        served[i] = served[i]! + 1;
      }
    }));
  }));
  for (const h of holders) h.close();
  assert.ok(peak <= limit, `peak ${peak} over the limit ${limit}`);
  assert.ok(served.every((n) => n > 0), `every holder served: ${served}`);
});

Deno.test("apf coordinator budgets: restarted, it has forgotten the ledgers; a holder still holding seats writes them back under a recovery mark, and a new one takes none of them", async () => {
  const config = configOf(8, [
    exempt(),
    limited("work", { shares: 5, queuing: { queues: 8, handSize: 2, queueLengthLimit: 100 } }),
  ]);
  const limit = config.priorityLevels.find((l) => l.name === "work")!.nominal;
  let running = start();
  const port = running.server.addr.port;
  const warnings: string[] = [];
  const timings = { periodMs: 100, leaseMs: 2_000, drainMs: 500, storeTimeoutMs: 1_000 };
  const a = new BudgetHolder(config, {
    store: new HttpBudgetStore(running.url, { token: TOKEN }),
    id: "a",
    ...timings,
    onWarning: (m) => warnings.push(m),
    onStoreError: () => {},
  });
  let b: BudgetHolder | null = null;
  const held: Admission[] = [];
  try {
    await a.ready();
    const request = (i: number) => ({
      priorityLevel: "work",
      flowSchema: "fs",
      flowHash: { hi: 0, lo: i },
      waitLimitMs: 5_000,
    });
    for (let i = 0; i < limit; i++) held.push(await a.acquire(request(i)));
    assert.ok(held.every((x) => x.admitted), "a holds every seat");
    await running.server.shutdown();
    running = serveAgain(port);
    await waitFor(
      () => warnings.some((w) => /forgot the ledger/.test(w)),
      "a finds its line gone and writes it back",
      3_000,
    );
    // A new holder on the restarted coordinator: a's seats are in use, and in the ledger again.
    b = new BudgetHolder(config, {
      store: new HttpBudgetStore(running.url, { token: TOKEN }),
      id: "b",
      ...timings,
      onWarning: () => {},
    });
    const waiting = b.acquire(request(99));
    let admittedEarly = false;
    void waiting.then((x) => admittedEarly = x.admitted);
    await sleep(300);
    assert.equal(admittedEarly, false, "b takes none of a's seats");
    assert.match(
      warnings.join("\n"),
      new RegExp(`127\\.0\\.0\\.1:${port}/budgets`),
      "names the store",
    );
    for (const x of held) if (x.admitted) x.seat.release();
    const outcome = await waiting;
    assert.ok(outcome.admitted, "b is served once a's seats are free and the window passed");
    outcome.seat.release();
  } finally {
    a.close();
    b?.close();
    await running.server.shutdown();
  }
});

function serveAgain(port: number) {
  const server = serveCoordinator({ listen: { hostname: "127.0.0.1", port }, token: TOKEN });
  return { server, url: `http://127.0.0.1:${port}/budgets` };
}
