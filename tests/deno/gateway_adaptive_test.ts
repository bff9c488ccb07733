import assert from "node:assert/strict";
import { serveGateway } from "../../src/deno/mod.ts";

/**
 * An upstream of `workers` workers taking `workMs` each, the rest queued in
 * order; it counts what it holds (in work or queued).
 */
function workerPool(workers: number, workMs: number) {
  let busy = 0;
  let held = 0;
  const waiting: (() => void)[] = [];
  const heldSamples: number[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async () => {
    held++;
    heldSamples.push(held);
    if (busy >= workers) await new Promise<void>((resolve) => waiting.push(resolve));
    else busy++;
    await new Promise((resolve) => setTimeout(resolve, workMs));
    held--;
    const next = waiting.shift();
    if (next !== undefined) next();
    else busy--;
    return new Response("done");
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    heldSamples,
    close: () => server.shutdown(),
  };
}

Deno.test('serveGateway({ serverConcurrencyLimit: "auto" options }): the learned limit finds a small worker pool, and what the upstream holds follows it', async () => {
  const K = 2, S = 20;
  const upstream = workerPool(K, S);
  const gateway = serveGateway({
    upstream: upstream.url,
    listen: { hostname: "127.0.0.1", port: 0 },
    serverConcurrencyLimit: { sampleWindowMs: 150, minRttRequests: 10, initial: 20 },
  });
  const base = `http://127.0.0.1:${gateway.addr.port}`;
  let running = true;
  const statuses = new Map<number, number>();
  const client = async () => {
    while (running) {
      const res = await fetch(base + "/work");
      await res.body?.cancel();
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    }
  };
  try {
    const clients = Array.from({ length: 12 }, client);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const from = upstream.heldSamples.length;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    running = false;
    await Promise.all(clients);
    const s = gateway.middleware.adaptiveSnapshot()!;
    assert.equal(s.phase, "sampling", JSON.stringify(s));
    assert.ok(s.minRttMs! >= S && s.minRttMs! < 4 * S, `minRTT ${s.minRttMs}`);
    // The fixed point is 1.25K + sqrt(1.25K) ≈ 4; the limit of 600 would let all 12 in.
    assert.ok(s.limit >= K && s.limit <= 4 * K, `limit ${s.limit}`);
    assert.equal(gateway.middleware.configuration.serverConcurrencyLimit, s.limit);
    const held = upstream.heldSamples.slice(from).sort((a, b) => a - b);
    const p90 = held[Math.ceil(0.9 * held.length) - 1]!;
    assert.ok(p90 <= 4 * K, `upstream held ${p90} (p90) of 12 clients`);
    assert.ok((statuses.get(200) ?? 0) > 0);
  } finally {
    running = false;
    await gateway.shutdown();
    await upstream.close();
  }
});
