import assert from "node:assert/strict";
import { serveGateway } from "../../src/deno/mod.ts";
import { percentile, smallConfig } from "./_helpers.ts";
import { sleep } from "../_helpers/real_time.ts";
import { tenantsManifest } from "../_helpers/tenants.ts";
import { testUpstream } from "../_helpers/upstream.ts";
import { systemClock } from "../../mod.ts";

const UPSTREAM_MS = 40;
const ELEPHANT_LOOPS = 24;
const MICE = ["mouse-1", "mouse-2", "mouse-3", "mouse-4"];

Deno.test("an elephant cannot starve the mice: fair queuing through the gateway", async () => {
  const upstream = testUpstream({ sleepMs: UPSTREAM_MS });
  await using gateway = serveGateway({
    upstream: upstream.url,
    listen: { hostname: "127.0.0.1", port: 0 },
    // The level `tenants` gets 4 seats, no lending or borrowing; one flow per user, each flow
    // on one queue of 8 (hand size 1), so the elephant cannot spread over the mice's queues.
    config: smallConfig(tenantsManifest({ shares: 95, handSize: 1, queueLengthLimit: 8 }), 4),
    trustIdentityHeaders: true,
  });
  const url = `http://${gateway.addr.hostname}:${gateway.addr.port}/work`;
  const level = () => gateway.middleware.snapshot()!.levels.find((l) => l.name === "tenants")!;
  let limit = level().currentLimit;
  const send = async (user: string) => {
    const start = systemClock.now();
    const res = await fetch(url, { headers: { "X-Remote-User": user } });
    await res.body?.cancel();
    return {
      status: res.status,
      retryAfter: res.headers.get("Retry-After"),
      ms: systemClock.now() - start,
    };
  };
  const mouse = async (user: string, requests: number, thinkMs: number) => {
    const latencies: number[] = [];
    const statuses: number[] = [];
    for (let i = 0; i < requests; i++) {
      const r = await send(user);
      statuses.push(r.status);
      latencies.push(r.ms);
      await sleep(thinkMs);
    }
    return { latencies, statuses };
  };

  try {
    // Unloaded: the mice alone (after a warm-up request each).
    await Promise.all(MICE.map((m) => mouse(m, 1, 0)));
    const alone = await Promise.all(MICE.map((m) => mouse(m, 5, 0)));
    const unloadedP50 = percentile(alone.flatMap((a) => a.latencies), 0.5);

    // Loaded: the elephant keeps 24 requests in flight on the mice's level.
    let stop = false;
    const elephant = { served: 0, rejected: 0, retryAfters: new Set<string | null>() };
    const loops = Array.from({ length: ELEPHANT_LOOPS }, async () => {
      while (!stop) {
        const r = await send("elephant");
        if (r.status === 200) elephant.served++;
        else {
          assert.equal(r.status, 429);
          elephant.rejected++;
          elephant.retryAfters.add(r.retryAfter);
          await sleep(20);
        }
        limit = Math.max(limit, level().currentLimit);
      }
    });
    while (level().queueSet.waitingRequests < 4) await sleep(5);
    const loaded = await Promise.all(MICE.map((m) => mouse(m, 12, 20)));
    const saturated = level().queueSet.seatsInUse;
    stop = true;
    await Promise.all(loops);

    const statuses = loaded.flatMap((l) => l.statuses);
    assert.deepEqual(statuses, statuses.map(() => 200), "every mouse request is served");
    const loadedP99 = percentile(loaded.flatMap((l) => l.latencies), 0.99);
    assert.ok(
      loadedP99 <= 4 * unloadedP50,
      `mice p99 ${loadedP99.toFixed(1)} ms under load, unloaded p50 ${unloadedP50.toFixed(1)} ms`,
    );
    assert.ok(elephant.rejected > 0, "the elephant got 429s");
    assert.ok(elephant.served > 0, "the elephant was served too");
    for (const value of elephant.retryAfters) assert.match(String(value), /^[1-9]\d*$/);
    assert.equal(saturated, limit, "the level was saturated");
    assert.equal(limit, 4);
    assert.ok(upstream.maxActive <= limit, `upstream saw ${upstream.maxActive} at once`);
    assert.equal(upstream.maxActive, limit);
  } finally {
    await gateway.shutdown();
    await upstream.close();
  }
});
