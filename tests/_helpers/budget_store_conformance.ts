/**
 * What every budget engine must do, as tests any engine runs over its own
 * store: `budgetStoreConformance("Deno KV", () => makeStore())`. The store
 * is a compare-and-set register of ledgers per level (`src/budgets/store.ts`);
 * the holders' guarantees rest on the write being refused whenever another
 * write landed since the read.
 */

import assert from "node:assert/strict";
import type { Ledger } from "../../src/budgets/ledger.ts";
import type { BudgetStore } from "../../src/budgets/store.ts";

/** A store under test, and how to let go of it. */
export interface StoreHarness {
  /** A store with no ledger for the levels the suite uses (fresh names per call are fine). */
  store: BudgetStore;
  /** Frees what the store holds (connections, files). */
  close(): void | Promise<void>;
}

/** A ledger of one line, `id`'s, claiming `claim` seats, as a holder writes it. */
export const ledger = (claim: number, id = "h1"): Ledger => ({
  holders: {
    [id]: {
      claim,
      demand: claim,
      limit: 10,
      beat: 1,
      leaseMs: 5_000,
      drainMs: 5_000,
      expiresAt: 1_700_000_000_000 + claim,
    },
  },
});

/**
 * Registers the conformance tests for `name`'s store. `make` returns a
 * fresh harness per test; `options.ignore` (with its reason printed once)
 * skips them where the engine is missing.
 */
export function budgetStoreConformance(
  name: string,
  make: () => StoreHarness | Promise<StoreHarness>,
  options: { ignore?: boolean; sanitizeResources?: boolean } = {},
): void {
  const test = (title: string, fn: (store: BudgetStore) => Promise<void>) =>
    Deno.test({
      name: `${name} store: ${title}`,
      ignore: options.ignore ?? false,
      sanitizeResources: options.sanitizeResources ?? true,
      sanitizeOps: options.sanitizeResources ?? true,
      fn: async () => {
        const harness = await make();
        try {
          await fn(harness.store);
        } finally {
          await harness.close();
        }
      },
    });

  test("a level without a ledger reads null; the first write expects null", async (store) => {
    assert.equal(await store.read("empty"), null);
    assert.equal(await store.write("fresh", "not-a-version", ledger(1)), false);
    assert.equal(await store.read("fresh"), null, "a refused write changes nothing");
    assert.equal(await store.write("fresh", null, ledger(1)), true);
    const stored = await store.read("fresh");
    assert.deepEqual(stored?.ledger, ledger(1));
    assert.equal(typeof stored?.version, "string");
  });

  test("a write lands only over the version read", async (store) => {
    assert.equal(await store.write("cas", null, ledger(1)), true);
    const first = (await store.read("cas"))!;
    assert.equal(await store.write("cas", first.version, ledger(2)), true);
    const second = (await store.read("cas"))!;
    assert.notEqual(second.version, first.version, "every write makes a new version");
    assert.equal(await store.write("cas", first.version, ledger(3)), false, "a stale version");
    assert.equal(await store.write("cas", null, ledger(3)), false, "it exists now");
    assert.deepEqual(
      (await store.read("cas"))!.ledger,
      ledger(2),
      "the refused writes changed nothing",
    );
  });

  test("of concurrent writes over one version, exactly one lands", async (store) => {
    assert.equal(await store.write("race", null, ledger(0)), true);
    const { version } = (await store.read("race"))!;
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => store.write("race", version, ledger(i + 1, `h${i}`))),
    );
    assert.equal(results.filter((r) => r).length, 1);
    const winner = results.indexOf(true);
    assert.deepEqual((await store.read("race"))!.ledger, ledger(winner + 1, `h${winner}`));
  });

  test("levels are apart; names and ledgers round-trip exactly", async (store) => {
    const odd = "level with spaces/and:colons-é";
    const big: Ledger = {
      holders: Object.fromEntries(
        Array.from({ length: 50 }, (_, i) => [
          `holder-${i}-${crypto.randomUUID()}`,
          {
            claim: i,
            demand: i * 2.5,
            limit: 600,
            beat: 1,
            leaseMs: 5_000,
            drainMs: 5_000,
            expiresAt: 1_764_000_000_000.5 + i,
          },
        ]),
      ),
    };
    assert.equal(await store.write(odd, null, big), true);
    assert.equal(await store.write("other", null, ledger(7)), true);
    assert.deepEqual((await store.read(odd))!.ledger, big);
    assert.deepEqual((await store.read("other"))!.ledger, ledger(7));
  });
}
