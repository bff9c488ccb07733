import assert from "node:assert/strict";
import { type ApfProcess, readUntil, spawnApf, stopApf } from "../_helpers/cli.ts";
import { sleep } from "../_helpers/real_time.ts";
import { flood } from "../_helpers/tenants.ts";
import { testUpstream } from "../_helpers/upstream.ts";

const tenants = new URL("./fixtures/tenants.yaml", import.meta.url).pathname;

/** `apf coordinator` holding a level `tenants` of 4 seats (one flow per user). */
function coordinatorAt(port: number): ApfProcess {
  return spawnApf([
    "coordinator",
    "--listen",
    `127.0.0.1:${port}`,
    "--config",
    tenants,
    "--mandatory-only",
    "--server-concurrency",
    "4",
  ]);
}

/** Resolves once `p` has printed `pattern` `times` times (counting from its start). */
async function printed(p: ApfProcess, pattern: string, times = 1): Promise<void> {
  const escaped = pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  await readUntil(
    p.stdout,
    new RegExp(Array(times).fill(escaped).join("[\\s\\S]*")),
    p.seen,
  );
}

async function get(base: string, path: string, user: string) {
  const started = Date.now();
  const res = await fetch(`${base}${path}`, { headers: { "X-Remote-User": user } });
  await res.body?.cancel();
  return { res, ms: Date.now() - started };
}

Deno.test("black box: two apf serve gateways share one apf coordinator: fair, bounded, and they follow their policy while it is gone", async () => {
  const upstream = testUpstream({ sleepMs: 30 });
  let coordinator = coordinatorAt(0);
  const gateways: ApfProcess[] = [];
  try {
    const [, port] = await readUntil(
      coordinator.stdout,
      /listening on ws:\/\/127\.0\.0\.1:(\d+)/,
      coordinator.seen,
    );
    // Gateway a falls back to a local limiter, gateway b refuses while the coordinator is gone.
    for (const policy of ["local", "closed"]) {
      gateways.push(spawnApf([
        "serve",
        "--upstream",
        upstream.url,
        "--listen",
        "127.0.0.1:0",
        "--trust-identity-headers",
        "--coordinator",
        `ws://127.0.0.1:${port}`,
        "--coordinator-policy",
        policy,
      ]));
    }
    const [a, b] = await Promise.all(gateways.map(async (g) => {
      const [, p] = await readUntil(g.stdout, /listening on http:\/\/127\.0\.0\.1:(\d+)/, g.seen);
      // Which configuration classifies: the coordinator's; the local one is the fallback's.
      assert.match(
        g.seen.text,
        /proxying to \S+ \(classifying with the coordinator's configuration; the local one \(\d+ priority levels, server concurrency \d+\) serves the fallback only\)/,
      );
      await printed(g, "sent its configuration");
      return `http://127.0.0.1:${p}`;
    })) as [string, string];

    // An elephant floods through a; mice come through b, one request at a time each.
    const elephant = flood(`${a}/big`, "elephant");
    await sleep(100);
    const mice = await Promise.all([1, 2, 3].map(async (m) => {
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++) statuses.push((await get(b, "/small", `mouse-${m}`)).res.status);
      return statuses;
    }));
    await elephant.stop();
    assert.deepEqual(mice.flat().filter((s) => s !== 200), [], "every mouse request served");
    assert.ok(elephant.rejected > 0, "the elephant was held to its share");
    assert.ok(elephant.served > 0);
    assert.ok(upstream.maxActive <= 4, `the upstream saw ${upstream.maxActive} at once, limit 4`);

    // The coordinator goes away: a serves from its local limiter, b refuses; neither hangs.
    assert.equal(await stopApf(coordinator), 0);
    await sleep(50);
    const local = await get(a, "/again", "mouse-1");
    assert.equal(local.res.status, 200);
    assert.ok(local.ms < 3000, `answered in ${local.ms} ms`);
    const closed = await get(b, "/again", "mouse-1");
    assert.equal(closed.res.status, 429);
    assert.ok(closed.ms < 3000, `answered in ${closed.ms} ms`);

    // It comes back on the same address: both gateways reconnect and take seats from it again.
    coordinator = coordinatorAt(Number(port));
    await readUntil(coordinator.stdout, /listening on ws:/, coordinator.seen);
    for (const g of gateways) await printed(g, "sent its configuration", 2);
    assert.equal((await get(b, "/back", "mouse-2")).res.status, 200);
    for (const g of gateways) assert.equal(await stopApf(g), 0);
    assert.equal(await stopApf(coordinator), 0);
  } finally {
    for (const p of [coordinator, ...gateways]) await p[Symbol.asyncDispose]();
    await upstream.close();
  }
});
