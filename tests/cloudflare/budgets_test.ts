/**
 * Seat budgets on Cloudflare, in workerd: the level objects keep each
 * level's ledger in their storage (the store conformance suite over their
 * RPC), and a Worker isolate decides on its share of `tenants` with no call
 * per request.
 */

import assert from "node:assert/strict";
import type { Ledger } from "../../src/budgets/ledger.ts";
import type { StoredLedger } from "../../src/budgets/store.ts";
import type { PriorityLevelObject } from "../../src/cloudflare/level_object.ts";
import { budgetStoreConformance } from "../_helpers/budget_store_conformance.ts";
import { byUserSchema, queuingLevel } from "./_manifests.ts";
import { MINIFLARE_TEST_OPTIONS, type StartedWorker, startWorker } from "./_miniflare.ts";

/** ServerCL 10, mandatory only: tenants has 9 seats (shares 45 against catch-all's 5). */
const APF_CONFIG = [
  queuingLevel("tenants", { shares: 45, queues: 64, handSize: 1, queueLengthLimit: 50 }),
  byUserSchema("tenants", 1000, "system:authenticated"),
].join("\n");

function start(): Promise<StartedWorker> {
  return startWorker({
    entry: new URL("./_fixtures/apf_test_worker.ts", import.meta.url),
    durableObjects: {
      APF_LEVELS: "PriorityLevelObject",
      APF_CONTROLLER: "ControllerObject",
      APF_HOLDERS: "TestBudgetHolderObject",
    },
    bindings: {
      APF_CONFIG,
      APF_SERVER_CONCURRENCY: "10",
      APF_MANDATORY_ONLY: "true",
      APF_TOKEN: "a-test-token-of-some-length",
      API_KEYS: "{}",
    },
  });
}

budgetStoreConformance(
  "Durable Object",
  async () => {
    const worker = await start();
    const stub = (level: string) => worker.durableObject<PriorityLevelObject>("APF_LEVELS", level);
    return {
      store: {
        read: async (level: string): Promise<StoredLedger | null> => {
          const stored = await (await stub(level)).readLedger();
          return stored === null ? null : structuredClone({ ...stored }) as StoredLedger;
        },
        write: async (level: string, expected: string | null, ledger: Ledger) =>
          await (await stub(level)).writeLedger(expected, ledger),
      },
      close: () => worker.dispose(),
    };
  },
  { sanitizeResources: false },
);

Deno.test({
  name:
    "Durable Object budgets: two regional holders share the level; the ledger holds their claims",
  ...MINIFLARE_TEST_OPTIONS,
  fn: async () => {
    await using worker = await start();
    const answers = await Promise.all(
      Array.from(
        { length: 30 },
        (_, i) =>
          worker.fetch(`/test/budget?ms=100&user=u${i % 5}&region=${i % 2 ? "eu" : "us"}`).then(
            async (r) => ({
              status: r.status,
              body: await r.json() as { admitted: boolean; peak: number },
            }),
          ),
      ),
    );
    assert.deepEqual(answers.filter((a) => a.status !== 200), [], "every request served");
    const peak = Math.max(...answers.map((a) => a.body.peak));
    assert.ok(peak >= 2 && peak <= 9, `peak ${peak} seats over both regions, limit 9`);
    const stub = await worker.durableObject<PriorityLevelObject>("APF_LEVELS", "tenants");
    const stored = structuredClone({ ...await stub.readLedger() }) as StoredLedger;
    const lines = Object.values(stored.ledger.holders);
    assert.equal(lines.length, 2, "one line per regional holder in the level object's ledger");
    assert.ok(lines.reduce((sum, e) => sum + e.claim, 0) <= 9, JSON.stringify(lines));
    assert.ok(lines.every((e) => e.limit === 9));
    await assert.rejects(stub.writeLedger(null, { holders: { x: { claim: -1 } } } as never));
  },
});
