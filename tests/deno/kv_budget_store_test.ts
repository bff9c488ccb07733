/**
 * The Deno KV budget store on a real KV file: the engine conformance suite,
 * the key prefix, how a malformed value reads (suspect lines), and bad options.
 */

import assert from "node:assert/strict";
import type { Ledger } from "../../src/budgets/ledger.ts";
import { KvBudgetStore } from "../../src/deno/kv_budget_store.ts";
import { budgetStoreConformance } from "../_helpers/budget_store_conformance.ts";
import { kvFile } from "./_kv_files.ts";

budgetStoreConformance("Deno KV", async () => {
  const file = await kvFile();
  const kv = await Deno.openKv(file.path);
  return {
    store: new KvBudgetStore(kv),
    async close() {
      kv.close();
      await file.remove();
    },
  };
});

const ledger: Ledger = {
  holders: {
    h1: {
      claim: 2,
      demand: 3.5,
      limit: 6,
      beat: 1,
      leaseMs: 5_000,
      drainMs: 5_000,
      expiresAt: 1_700_000_000_000,
    },
  },
};

/** Runs `fn` on a fresh KV file, closed and deleted after. */
async function onKv(fn: (kv: Deno.Kv) => Promise<void>): Promise<void> {
  await using file = await kvFile();
  const kv = await Deno.openKv(file.path);
  try {
    await fn(kv);
  } finally {
    kv.close();
  }
}

Deno.test("Deno KV store: a ledger is one entry at [...prefix, level]; prefixes are apart", async () => {
  await onKv(async (kv) => {
    const apf = new KvBudgetStore(kv);
    const other = new KvBudgetStore(kv, { prefix: ["tenant", 7n, "budgets"] });
    assert.equal(await apf.write("work", null, ledger), true);
    const entry = await kv.get<Ledger>(["apf", "budgets", "work"]);
    assert.deepEqual(entry.value, ledger);
    assert.equal((await apf.read("work"))?.version, entry.versionstamp);
    assert.equal(await other.read("work"), null, "another prefix has no ledger yet");
    assert.equal(await other.write("work", null, { holders: {} }), true);
    assert.deepEqual((await apf.read("work"))?.ledger, ledger, "nor does it touch this one");
    assert.deepEqual((await kv.get(["tenant", 7n, "budgets", "work"])).value, { holders: {} });
  });
});

Deno.test("Deno KV store: a ledger's every field round-trips, the averages for borrowing too", async () => {
  await onKv(async (kv) => {
    const store = new KvBudgetStore(kv);
    const full: Ledger = {
      holders: {
        h1: {
          claim: 2,
          demand: 3,
          average: 1.25,
          deviation: 0.5,
          limit: 6,
          beat: 1,
          leaseMs: 5_000,
          drainMs: 5_000,
          expiresAt: 1.5,
        },
        h2: {
          claim: 0,
          demand: 0,
          limit: 6,
          beat: 1,
          leaseMs: 5_000,
          drainMs: 5_000,
          expiresAt: 2,
        },
      },
    };
    assert.equal(await store.write("work", null, full), true);
    assert.deepEqual((await store.read("work"))!.ledger, full);
  });
});

Deno.test("Deno KV store: a malformed value reads as suspects naming the line and the field; a write over its version replaces it", async () => {
  await onKv(async (kv) => {
    const store = new KvBudgetStore(kv);
    const key = ["apf", "budgets", "work"];
    const line = ledger.holders.h1!;
    const cases: [unknown, string, RegExp][] = [
      ["a string", "(ledger)", /not a budget ledger/],
      [{ holders: [] }, "(ledger)", /not a budget ledger/],
      [{ holders: { h1: null } }, "h1", /expected object/],
      [{ holders: { h1: { ...line, claim: "2" } } }, "h1", /at claim: .*string/],
      [{ holders: { h1: { ...line, demand: -1 } } }, "h1", /at demand: .*>=0/],
      [{ holders: { h1: { ...line, expiresAt: NaN } } }, "h1", /at expiresAt: .*NaN/],
      [{ holders: { h1: { claim: 1, demand: 1, expiresAt: 1 } } }, "h1", /at limit/],
    ];
    for (const [value, id, reason] of cases) {
      await kv.set(key, value);
      const read = await store.read("work");
      assert.deepEqual(read!.ledger.holders, {}, "no valid line");
      assert.equal(read!.suspects?.[0]?.id, id);
      assert.match(read!.suspects![0]!.reason, reason);
      // Written over the version read, a ledger replaces it; with another version, nothing lands.
      assert.equal(await store.write("work", null, ledger), false);
      assert.deepEqual((await kv.get(key)).value, value);
      assert.equal(await store.write("work", read!.version, ledger), true);
      assert.deepEqual((await store.read("work"))!.ledger, ledger);
    }
  });
});

Deno.test("Deno KV store: a kv that is not one, or a bad prefix, throws at creation", () => {
  assert.throws(
    () => new KvBudgetStore({} as Deno.Kv),
    { name: "TypeError", message: /kv must be a Deno\.Kv .*got \[object Object\]/ },
  );
  assert.throws(
    () => new KvBudgetStore(undefined as unknown as Deno.Kv),
    { name: "TypeError", message: /got undefined/ },
  );
  const kv = { get() {}, atomic() {} } as unknown as Deno.Kv;
  assert.throws(
    () => new KvBudgetStore(kv, { prefix: "apf" as unknown as Deno.KvKey }),
    { name: "TypeError", message: /prefix must be an array of key parts, got apf/ },
  );
  assert.throws(
    () => new KvBudgetStore(kv, { prefix: [{}] as unknown as Deno.KvKey }),
    { name: "TypeError", message: /prefix must be an array of key parts/ },
  );
});

Deno.test("Deno KV store: a closed kv rejects (a store failure), it does not throw", async () => {
  await using file = await kvFile();
  const kv = await Deno.openKv(file.path);
  const store = new KvBudgetStore(kv);
  kv.close();
  await assert.rejects(store.read("work"));
  await assert.rejects(store.write("work", null, ledger));
});

Deno.test("KvBudgetStore.openKv: handles opened at once on one new file all work; other errors pass through", async () => {
  await using file = await kvFile();
  // Several handles set the new file up at the same moment (as processes started together do).
  const kvs = await Promise.all(Array.from({ length: 6 }, () => KvBudgetStore.openKv(file.path)));
  try {
    await Promise.all(kvs.map((kv, i) => kv.set(["k", i], i)));
    const seen = await Array.fromAsync(kvs[0]!.list<number>({ prefix: ["k"] }));
    assert.deepEqual(seen.map((e) => e.value), [0, 1, 2, 3, 4, 5]);
  } finally {
    for (const kv of kvs) kv.close();
  }
  // Not a lock: the error as Deno.openKv gives it.
  await assert.rejects(
    KvBudgetStore.openKv(`${file.dir}/missing/dir/budgets.sqlite3`),
    (e) => !/database is locked/.test(String(e)),
  );
});
