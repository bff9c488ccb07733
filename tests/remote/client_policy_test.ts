/**
 * The remote client's policies when the coordinator cannot be reached:
 * `open` admits, `closed` rejects `unavailable`, `local` limits with an
 * embedded coordinator at a fraction of the server's limit.
 */

import assert from "node:assert/strict";
import { connectCoordinator } from "../../src/remote/client.ts";
import type { WireConfiguration } from "../../src/protocol/wire.ts";
import { effectiveFromWire } from "../../src/protocol/wire_configuration.ts";
import { sleep, waitFor } from "../_helpers/real_time.ts";
import { assertNoLeak, queued, since } from "./_client_helpers.ts";
import { configOf, limited } from "../_helpers/coordinator_config.ts";
import { conformanceConfiguration } from "../_helpers/coordinator_conformance.ts";
import { startServer } from "./_server.ts";

/** A loopback URL nobody listens on. */
async function deadUrl(): Promise<string> {
  const s = startServer({ config: conformanceConfiguration() });
  await s.close();
  return s.url;
}

const fast = { deadlineMarginMs: 100, reconnect: { initialMs: 50, maxMs: 200 } };

Deno.test("client policy open: admits at once with a seat released once", async () => {
  await using client = connectCoordinator(await deadUrl(), { ...fast, policy: "open" });
  await waitFor(() => client.state === "disconnected", "refused");
  const a = await client.acquire(queued());
  assert.ok(a.admitted);
  assert.equal(a.waitedMs, 0);
  assert.equal(a.seat.priorityLevel, "queued");
  assert.throws(() => a.seat.release({ executionMs: -1 }), RangeError);
  assert.equal(a.seat.release(), true);
  assert.equal(a.seat.release(), false);
  assert.equal(client.stats.fallbacks, 1);
});

Deno.test("client policy closed: rejects unavailable, Retry-After 1", async () => {
  await using client = connectCoordinator(await deadUrl(), { ...fast, policy: "closed" });
  await waitFor(() => client.state === "disconnected", "refused");
  assert.deepEqual(await client.acquire(queued()), {
    admitted: false,
    reason: "unavailable",
    retryAfterSeconds: 1,
  });
});

Deno.test("client policy local: an embedded limiter at a fraction of the given configuration", async () => {
  await using client = connectCoordinator(await deadUrl(), {
    ...fast,
    // ServerCL 6 at one half: 3 seats, one per limited level.
    fallback: { configuration: conformanceConfiguration(), fraction: 0.5 },
  });
  await waitFor(() => client.state === "disconnected", "refused");
  const a = await client.acquire(queued());
  assert.ok(a.admitted);
  const b = await client.acquire(queued({ waitLimitMs: 0 }));
  assert.equal(b.admitted, false, "the local limit is one seat");
  assert.equal(a.seat.release(), true);
  const c = await client.acquire(queued());
  assert.ok(c.admitted);
  c.seat.release();
});

Deno.test("client policy local: without any configuration it answers unavailable", async () => {
  await using client = connectCoordinator(await deadUrl(), fast);
  await waitFor(() => client.state === "disconnected", "refused");
  assert.equal((await client.acquire(queued())).admitted, false);
});

Deno.test("client policy local: follows the configuration the server sent last, at the fraction", async () => {
  const wire: WireConfiguration = {
    serverConcurrencyLimit: 20,
    mandatoryOnly: true,
    objects: [limited("remote-only", { queuing: { queues: 1, handSize: 1, queueLengthLimit: 5 } })],
  };
  const server = startServer({ config: configOf(20, [limited("remote-only")]), wire });
  const client = connectCoordinator(server.url, { ...fast, fallback: { fraction: 0.1 } });
  const seen: WireConfiguration[] = [];
  client.onConfiguration((c) => seen.push(c));
  try {
    const a = await client.acquire({ priorityLevel: "remote-only", flowSchema: "fs" });
    assert.ok(a.admitted);
    assert.deepEqual(client.configuration, wire);
    assert.deepEqual(seen, [wire]);
    a.seat.release();
    await assertNoLeak(server);
    await server.close();
    await waitFor(() => client.state !== "connected", "disconnected");
    // 10% of 20 is 2 seats, shared by remote-only and the mandatory levels.
    const local = await client.acquire({ priorityLevel: "remote-only", flowSchema: "fs" });
    assert.ok(local.admitted, "served by the local limiter");
    const more = await client.acquire({
      priorityLevel: "remote-only",
      flowSchema: "fs",
      waitLimitMs: 0,
    });
    assert.equal(more.admitted, false, "the local limiter is small");
    local.seat.release();
    assert.equal(client.stats.fallbacks, 2);
  } finally {
    await client.close();
    await server.close();
  }
});

Deno.test("client policy local: a stalled coordinator's request goes local at the deadline, without queuing again", async () => {
  const server = startServer({ config: conformanceConfiguration(), mode: "stall" });
  const client = connectCoordinator(server.url, {
    ...fast,
    connectTimeoutMs: 5_000,
    fallback: { configuration: conformanceConfiguration(), fraction: 1 },
  });
  try {
    const started = performance.now();
    const a = await client.acquire(queued({ waitLimitMs: 100 }));
    assert.ok(a.admitted, "admitted locally");
    assert.ok(since(started) < 600, `at the deadline (${since(started)} ms)`);
    a.seat.release();
  } finally {
    await client.close();
    await server.close();
  }
});

Deno.test("client policy local: a connection lost while a request waits leaves it only the rest of its wait limit locally", async () => {
  // ServerCL 20 over remote-only (1 share) and the mandatory catch-all (5): 4 seats on the
  // server; the local limiter at 10% has 1.
  const wire: WireConfiguration = {
    serverConcurrencyLimit: 20,
    mandatoryOnly: true,
    objects: [limited("remote-only", { queuing: { queues: 1, handSize: 1, queueLengthLimit: 5 } })],
  };
  const server = startServer({ config: effectiveFromWire(wire)!, wire });
  const client = connectCoordinator(server.url, { ...fast, fallback: { fraction: 0.1 } });
  const request = { priorityLevel: "remote-only", flowSchema: "fs" };
  try {
    const seats = [];
    for (let i = 0; i < 4; i++) {
      const a = await client.acquire(request);
      assert.ok(a.admitted);
      seats.push(a.seat);
    }
    const started = performance.now();
    const first = client.acquire({ ...request, waitLimitMs: 600 });
    const second = client.acquire({ ...request, waitLimitMs: 600 });
    await sleep(400);
    await server.dropClients();
    // The first takes the local limiter's one seat; the second queues locally for what is
    // left of its 600 ms, not for 600 ms more.
    const a = await first;
    assert.ok(a.admitted, "the first is served by the local limiter");
    const b = await second;
    assert.equal(!b.admitted && b.reason, "time-out");
    const took = since(started);
    assert.ok(took < 600 + 100 + 150, `answered by its deadline (${took} ms)`);
    a.seat.release();
    await waitFor(() => client.state === "connected", "resumed");
    for (const s of seats) s.release();
    await assertNoLeak(server);
  } finally {
    await client.close();
    await server.close();
  }
});

Deno.test("ready(): resolves once the first attempt ended, welcomed or refused", async () => {
  const config = conformanceConfiguration();
  const wire: WireConfiguration = { serverConcurrencyLimit: 6, mandatoryOnly: false, objects: [] };
  const server = startServer({ config, wire });
  try {
    await using live = connectCoordinator(server.url, fast);
    await live.ready();
    assert.equal(live.state, "connected");
    assert.deepEqual(live.configuration, wire);
    await live.ready(); // again: at once
  } finally {
    await server.close();
  }
  await using dead = connectCoordinator(await deadUrl(), { ...fast, policy: "closed" });
  await dead.ready();
  assert.equal(dead.configuration, null);
  assert.notEqual(dead.state, "connected");
});

Deno.test("client policy local: requests waiting in the local limiter move to the coordinator once it is back", async () => {
  // ServerCL 20: 4 seats of remote-only on the server, 1 in the local limiter at 10%.
  const wire: WireConfiguration = {
    serverConcurrencyLimit: 20,
    mandatoryOnly: true,
    objects: [limited("remote-only", { queuing: { queues: 1, handSize: 1, queueLengthLimit: 5 } })],
  };
  const server = startServer({ config: effectiveFromWire(wire)!, wire });
  const client = connectCoordinator(server.url, { ...fast, fallback: { fraction: 0.1 } });
  const request = { priorityLevel: "remote-only", flowSchema: "fs", waitLimitMs: 5_000 };
  let server2;
  try {
    await client.ready();
    await server.close();
    await waitFor(() => client.state !== "connected", "disconnected");
    const local = await client.acquire(request);
    assert.ok(local.admitted, "the local limiter's one seat");
    const waiting = [client.acquire(request), client.acquire(request)];
    const localLevel = () =>
      client.snapshot()!.levels.find((l) => l.name === "remote-only")!.queueSet;
    await waitFor(() => localLevel().waitingRequests === 2, "two wait in the local limiter");
    assert.equal(localLevel().seatsInUse, 1);

    const started = performance.now();
    server2 = startServer({ config: effectiveFromWire(wire)!, wire, port: server.port });
    const moved = await Promise.all(waiting);
    // Served by the coordinator's free seats, not after the local seat (held 5 s) frees.
    assert.ok(moved.every((a) => a.admitted), JSON.stringify(moved));
    assert.ok(since(started) < 2_000, `moved at the reconnection (${since(started)} ms)`);
    assert.equal(localLevel().waitingRequests, 0);
    const remote = server2.coordinator.snapshot().levels.find((l) => l.name === "remote-only")!;
    assert.equal(remote.queueSet.seatsInUse, 2);
    for (const a of moved) if (a.admitted) a.seat.release();
    local.seat.release();
    assert.equal(localLevel().seatsInUse, 0);
    await assertNoLeak(server2);
  } finally {
    await client.close();
    await server.close();
    await server2?.close();
  }
});
