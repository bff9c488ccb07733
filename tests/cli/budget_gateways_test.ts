/**
 * Black box: three `apf serve` gateways deciding on seat budgets from one
 * store (`apf coordinator`, a `redis-server`, a Deno KV file): an elephant floods one, mice use the others; the
 * upstream never sees more requests in flight than the level's limit; a
 * gateway killed with SIGKILL gives its share back after its lease; the
 * store gone, the gateways follow their policy without a request hanging,
 * and come back to budgets when it returns.
 */

import assert from "node:assert/strict";
import { type ApfProcess, readUntil, spawnApf, stopApf } from "../_helpers/cli.ts";
import { sleep } from "../_helpers/real_time.ts";
import { flood } from "../_helpers/tenants.ts";
import { testUpstream } from "../_helpers/upstream.ts";
import { REDIS_MISSING, startRedis } from "../_helpers/redis_server.ts";

const tenants = new URL("./fixtures/tenants.yaml", import.meta.url).pathname;
/** `tenants` gets ceil(12 × 95 / 340) = 4 seats, and neither lends nor borrows. */
const LIMIT = 4;

function coordinatorAt(port: number): ApfProcess {
  return spawnApf(["coordinator", "--listen", `127.0.0.1:${port}`]);
}

function gateway(upstream: string, coordinator: string, policy: string): ApfProcess {
  return spawnApf([
    "serve",
    "--upstream",
    upstream,
    "--listen",
    "127.0.0.1:0",
    "--config",
    tenants,
    "--server-concurrency",
    "12",
    "--trust-identity-headers",
    "--coordinator",
    coordinator,
    "--coordinator-mode",
    "budget",
    "--budget-period",
    "100ms",
    "--budget-lease",
    "500ms",
    "--coordinator-policy",
    policy,
  ]);
}

async function get(base: string, path: string, user: string) {
  const started = Date.now();
  const res = await fetch(`${base}${path}`, { headers: { "X-Remote-User": user } });
  await res.body?.cancel();
  return { status: res.status, ms: Date.now() - started };
}

/** A store the gateways share: its address, how to stop it and start it again, how long it waits after a start. */
interface SharedStore {
  address: string;
  graceMs: number;
  /** Stops the store and starts it again, or `null` for one that cannot be stopped (a file). */
  stop: (() => Promise<void>) | null;
  start(): Promise<void>;
  close(): Promise<void>;
}

async function coordinatorStore(): Promise<SharedStore> {
  let coordinator = coordinatorAt(0);
  const [, port] = await readUntil(
    coordinator.stdout,
    /listening on ws:\/\/127\.0\.0\.1:(\d+)/,
    coordinator.seen,
  );
  return {
    address: `ws://127.0.0.1:${port}`,
    // After a start, every level holds a placeholder claim for 3 s (budgetGraceMs).
    graceMs: 3_200,
    stop: async () => assert.equal(await stopApf(coordinator), 0),
    start: async () => {
      coordinator = coordinatorAt(Number(port));
      await readUntil(coordinator.stdout, /listening on ws:/, coordinator.seen);
    },
    close: async () => await coordinator[Symbol.asyncDispose](),
  };
}

async function redisStore(): Promise<SharedStore> {
  const server = await startRedis();
  return {
    address: server.url,
    graceMs: 0,
    stop: () => server.stop(),
    start: () => server.restart(),
    close: () => server.stop(),
  };
}

async function kvStore(): Promise<SharedStore> {
  const dir = await Deno.makeTempDir({ prefix: "apf-kv-gateways-" });
  return {
    address: `kv:${dir}/ledgers.sqlite`,
    graceMs: 0,
    stop: null,
    start: async () => {},
    close: () => Deno.remove(dir, { recursive: true }),
  };
}

async function threeGateways(makeStore: () => Promise<SharedStore>): Promise<void> {
  const upstream = testUpstream({ sleepMs: 30 });
  const store = await makeStore();
  const gateways: ApfProcess[] = [];
  try {
    const at = store.address;
    for (const policy of ["local", "closed", "closed"]) {
      gateways.push(gateway(upstream.url, at, policy));
    }
    const [a, b, c] = await Promise.all(gateways.map(async (g) => {
      await readUntil(g.stdout, /deciding on seat budgets/, g.seen);
      const [, p] = await readUntil(g.stdout, /listening on http:\/\/127\.0\.0\.1:(\d+)/, g.seen);
      return `http://127.0.0.1:${p}`;
    })) as [string, string, string];
    await sleep(store.graceMs);

    // An elephant floods through a; mice come through b and c, one request at a time each.
    const elephant = flood(`${a}/big`, "elephant");
    await sleep(500);
    const mice = await Promise.all([b, c].map(async (base, m) => {
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++) statuses.push((await get(base, "/small", `mouse-${m}`)).status);
      return statuses;
    }));
    assert.deepEqual(mice.flat().filter((s) => s !== 200), [], "every mouse request served");
    assert.ok(elephant.served > 0, "the elephant is served too");
    assert.ok(
      upstream.maxActive <= LIMIT,
      `the upstream saw ${upstream.maxActive}, limit ${LIMIT}`,
    );

    // Gateway a dies mid-flood: after its lease, drain and skew (0.5 + 0.5 + 1 s), b gets them.
    gateways[0]!.child.kill("SIGKILL");
    await elephant.stop().catch(() => {});
    const second = flood(`${b}/big`, "elephant-2");
    await sleep(3_000);
    const before = upstream.handled;
    await sleep(1_000);
    await second.stop();
    assert.ok(upstream.handled - before > 40, "b serves with the whole level");
    assert.ok(
      upstream.maxActive <= LIMIT,
      `the upstream saw ${upstream.maxActive}, limit ${LIMIT}`,
    );

    // The store goes away: b and c (closed) answer 429 after their lease, without hanging.
    if (store.stop === null) {
      for (const g of gateways.slice(1)) assert.equal(await stopApf(g), 0);
      return;
    }
    await store.stop();
    await sleep(1_500);
    const closed = await get(b, "/again", "mouse-0");
    assert.equal(closed.status, 429);
    assert.ok(closed.ms < 3_000, `answered in ${closed.ms} ms`);

    // It comes back on the same address: budgets again (after the coordinator's grace).
    await store.start();
    await sleep(store.graceMs + 1_300);
    assert.equal((await get(c, "/back", "mouse-1")).status, 200);
    for (const g of gateways.slice(1)) assert.equal(await stopApf(g), 0);
  } finally {
    for (const p of gateways) await p[Symbol.asyncDispose]();
    await store.close();
    await upstream.close();
  }
}

Deno.test("black box: three apf serve gateways on seat budgets from one apf coordinator", () =>
  threeGateways(coordinatorStore));

Deno.test({
  name: "black box: three apf serve gateways on seat budgets from one redis-server",
  ignore: REDIS_MISSING,
  fn: () => threeGateways(redisStore),
});

Deno.test("black box: three apf serve gateways on seat budgets from one Deno KV file", () =>
  threeGateways(kvStore));
