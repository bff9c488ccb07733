/**
 * `APF_SERVER_CONCURRENCY=auto` in workerd: the controller object boots
 * with a learned limit, learns it from the latency of the seats the level
 * objects hand out in front of a slow upstream, and the admin routes
 * report it.
 */

import assert from "node:assert/strict";
import type { ControllerObject } from "../../src/cloudflare/controller_object.ts";
import { eventually } from "./_eventually.ts";
import { byUserSchema, queuingLevel } from "./_manifests.ts";
import { MINIFLARE_TEST_OPTIONS, startWorker } from "./_miniflare.ts";

const TOKEN = "a-test-token-of-some-length";

Deno.test({
  name: "controller: APF_SERVER_CONCURRENCY=auto learns the limit in front of a slow upstream",
  ...MINIFLARE_TEST_OPTIONS,
  fn: async () => {
    await using worker = await startWorker({
      entry: new URL("./_fixtures/apf_test_worker.ts", import.meta.url),
      durableObjects: { APF_LEVELS: "PriorityLevelObject", APF_CONTROLLER: "ControllerObject" },
      bindings: {
        APF_CONFIG: queuingLevel("tenants", { queues: 1, handSize: 1, queueLengthLimit: 200 }) +
          byUserSchema("tenants", 1000, "system:authenticated"),
        APF_SERVER_CONCURRENCY: "auto",
        APF_SERVER_CONCURRENCY_MAX: "100",
        APF_SERVER_CONCURRENCY_INITIAL: "24",
        APF_MANDATORY_ONLY: "true",
        APF_TOKEN: TOKEN,
      },
    });
    const controller = await worker.durableObject<ControllerObject>("APF_CONTROLLER", "controller");
    const stored = structuredClone({ ...await controller.configuration() });
    assert.deepEqual(stored.adaptive, { max: 100, initial: 24 });
    assert.equal(stored.configuration.serverConcurrencyLimit, 24, "learning starts there");

    // 32 callers in front of 4 workers of 50 ms: at 24 seats, the upstream queues.
    let stop = false;
    const statuses = new Map<number, number>();
    const caller = async (i: number) => {
      while (!stop) {
        const res = await worker.fetch(`/test/upstream?user=u${i}&workers=4&ms=50`);
        await res.body?.cancel();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      }
    };
    const callers = Array.from({ length: 32 }, (_, i) => caller(i));
    const learned = await eventually(
      async () => structuredClone({ ...(await controller.adaptiveSnapshot())! }),
      (s) => s.minRttMeasurements >= 1 && s.windows >= 2 && s.phase === "sampling",
      30_000,
    ).finally(() => stop = true);
    await Promise.all(callers);
    assert.deepEqual([...statuses.keys()], [200], `every request served: ${[...statuses]}`);
    assert.ok(learned.minRttMs! >= 45, `minRTT ${learned.minRttMs} ms: the upstream's 50 ms`);
    // 4 workers: the learned limit comes down from 24 toward 1.25·4 + sqrt(1.25·4) ≈ 7.
    assert.ok(learned.limit < 24, `learned ${learned.limit}`);

    // Reported where the static limit is.
    const admin = (path: string) =>
      worker.fetch(`/apf${path}`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    const dump = await (await admin("/debug/api_priority_and_fairness/dump_priority_levels"))
      .text();
    assert.match(dump, /^# serverConcurrencyLimit: learned \d+ \(phase /m);
    assert.match(dump, /bounds 3\.\.100\)/);
    const metrics = await (await admin("/metrics")).text();
    assert.match(metrics, /^apf_adaptive_concurrency_limit \d+$/m);
    assert.match(metrics, /^apf_adaptive_min_rtt_seconds 0\.0\d+$/m);
  },
});
