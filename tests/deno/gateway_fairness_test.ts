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
  // The tag of every request as it reaches the upstream, in order (`?r=<user>-<n>`).
  const arrivals: string[] = [];
  const upstream = testUpstream({
    sleepMs: UPSTREAM_MS,
    onActive: (_, change, req) => {
      if (change === 1) arrivals.push(new URL(req.url).searchParams.get("r") ?? "");
    },
  });
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
  let sent = 0;
  const send = async (user: string) => {
    const start = systemClock.now();
    // Where the upstream's log of requests stood when this one was sent; a tag to find it there.
    const from = arrivals.length;
    const tag = `${user}-${sent++}`;
    const res = await fetch(`${url}?r=${tag}`, { headers: { "X-Remote-User": user } });
    await res.body?.cancel();
    return {
      status: res.status,
      retryAfter: res.headers.get("Retry-After"),
      ms: systemClock.now() - start,
      from,
      tag,
    };
  };
  /**
   * How many of the elephant's requests reached the upstream after this one
   * was sent and before it: what it waited behind. An order, not a time: a
   * slow machine slows both alike.
   */
  const elephantsAhead = (r: { from: number; tag: string }) => {
    let ahead = 0;
    for (let i = r.from; i < arrivals.length; i++) {
      if (arrivals[i] === r.tag) return ahead;
      if (arrivals[i]!.startsWith("elephant-")) ahead++;
    }
    throw new Error(`request ${r.tag} never reached the upstream`);
  };
  const mouse = async (user: string, requests: number, thinkMs: number) => {
    const latencies: number[] = [];
    const statuses: number[] = [];
    const ahead: number[] = [];
    for (let i = 0; i < requests; i++) {
      const r = await send(user);
      statuses.push(r.status);
      latencies.push(r.ms);
      if (r.status === 200) ahead.push(elephantsAhead(r));
      await sleep(thinkMs);
    }
    return { latencies, statuses, ahead };
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
    // In one queue, first come, first served, a mouse would wait behind the elephant's backlog
    // (20 requests with that queue 128 long; refused with it 8 long). Fair queuing serves the
    // mouse's queue at the next free seat: at most the elephant's requests already on their way
    // to the upstream (one per seat) go first. Counted in order, not time: no wall-clock bound.
    const ahead = loaded.flatMap((l) => l.ahead);
    const loadedP99 = percentile(loaded.flatMap((l) => l.latencies), 0.99);
    assert.ok(
      Math.max(...ahead) <= limit,
      `elephant requests served ahead of a mouse's: ${ahead.join(" ")} (mice p99 ` +
        `${loadedP99.toFixed(1)} ms under load, unloaded p50 ${unloadedP50.toFixed(1)} ms)`,
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
