/**
 * The Deno KV budget store on a real KV file: the engine conformance suite,
 * the key prefix, what a malformed value does, and bad options.
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
  holders: { h1: { claim: 2, demand: 3.5, limit: 6, expiresAt: 1_700_000_000_000 } },
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
        h1: { claim: 2, demand: 3, average: 1.25, deviation: 0.5, limit: 6, expiresAt: 1.5 },
        h2: { claim: 0, demand: 0, limit: 6, expiresAt: 2 },
      },
    };
    assert.equal(await store.write("work", null, full), true);
    assert.deepEqual((await store.read("work"))!.ledger, full);
  });
});

Deno.test("Deno KV store: a malformed value rejects the read naming the key and the field, and is not overwritten", async () => {
  await onKv(async (kv) => {
    const store = new KvBudgetStore(kv);
    const key = ["apf", "budgets", "work"];
    const line = ledger.holders.h1!;
    const cases: [unknown, RegExp][] = [
      ["a string", /^TypeError: Deno KV key \["apf", "budgets", "work"\]: not a budget ledger: /],
      [{ holders: [] }, /not a budget ledger at holders: .*array/],
      [{ holders: { h1: null } }, /not a budget ledger at holders\.h1: .*null/],
      [{ holders: { h1: { ...line, claim: "2" } } }, /at holders\.h1\.claim: .*string/],
      [{ holders: { h1: { ...line, demand: -1 } } }, /at holders\.h1\.demand: .*>=0/],
      [{ holders: { h1: { ...line, expiresAt: NaN } } }, /at holders\.h1\.expiresAt: .*NaN/],
      [{ holders: { h1: { claim: 1, demand: 1, expiresAt: 1 } } }, /at holders\.h1\.limit/],
    ];
    for (const [value, message] of cases) {
      await kv.set(key, value);
      await assert.rejects(store.read("work"), (e) => {
        assert.match(String(e), message);
        return true;
      });
      const { versionstamp } = await kv.get(key);
      // A holder that read nothing writes nothing: with the entry's own version a write would
      // land, so the store never hides a bad value behind `null`.
      assert.equal(await store.write("work", null, ledger), false);
      assert.deepEqual((await kv.get(key)).value, value);
      assert.equal((await kv.get(key)).versionstamp, versionstamp);
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
