/**
 * The remote client against a real loopback server that fails: killed and
 * restarted, dropping the client's socket, stalling, sending garbage,
 * refusing the token, deciding too late. Each test ends with the seat-leak
 * check on the server, and each runs on both transports: Deno's `WebSocket`
 * and `noDelayWebSocket()`.
 */

import assert from "node:assert/strict";
import { connectCoordinator, CoordinatorRefusedError } from "../../src/remote/client.ts";
import type { Admission } from "../../src/coordinator/types.ts";
import { noDelayWebSocket } from "../../src/deno/no_delay_websocket.ts";
import { sleep, waitFor } from "../_helpers/real_time.ts";
import { assertNoLeak, queued, since } from "./_client_helpers.ts";
import { conformanceConfiguration } from "../_helpers/coordinator_conformance.ts";
import { startServer } from "./_server.ts";

const options = {
  policy: "closed" as const,
  deadlineMarginMs: 200,
  connectTimeoutMs: 1_000,
  reconnect: { initialMs: 20, maxMs: 100 },
};

/** Every case runs on Deno's `WebSocket` and on `noDelayWebSocket()`. */
const TRANSPORTS = [
  ["Deno's WebSocket", options],
  ["noDelayWebSocket", { ...options, webSocket: noDelayWebSocket({ closeTimeoutMs: 200 }) }],
] as const;

async function admitted(p: Promise<Admission>) {
  const a = await p;
  assert.ok(a.admitted, `admitted, got ${JSON.stringify(a)}`);
  return a.seat;
}

for (const [transport, fast] of TRANSPORTS) {
  Deno.test(`client (${transport}): the server killed mid-flight answers waiters by policy at once; after a restart on the same port the client reconnects`, async () => {
    const server = startServer({ config: conformanceConfiguration(), graceMs: 300 });
    const client = connectCoordinator(server.url, fast);
    let server2;
    try {
      const a = await admitted(client.acquire(queued()));
      const b = await admitted(client.acquire(queued()));
      const waiter = client.acquire(queued({ waitLimitMs: 2_000 }));
      await waitFor(
        () => server.coordinator.snapshot().levels.some((l) => l.queueSet.waitingRequests === 1),
        "the waiter queued",
      );
      const started = performance.now();
      await server.close();
      assert.deepEqual(await waiter, {
        admitted: false,
        reason: "unavailable",
        retryAfterSeconds: 1,
      });
      assert.ok(
        since(started) < 2_000 + 200,
        `answered within the deadline (${since(started)} ms)`,
      );
      assert.notEqual(client.state, "connected");
      // While the coordinator is away, requests get the policy at once.
      assert.equal((await client.acquire(queued())).admitted, false);
      assert.equal(a.release(), true, "releasing while disconnected is harmless");
      server2 = startServer({ config: conformanceConfiguration(), port: server.port });
      await waitFor(() => client.state === "connected", "reconnected");
      assert.equal(client.stats.reconnects, 1);
      // The new server has no session to resume: the seat still held is lost, never doubled.
      assert.equal(client.stats.lost, 1);
      assert.equal(b.release(), false, "a lost seat's release is a no-op");
      const c = await admitted(client.acquire(queued()));
      const d = await admitted(client.acquire(queued()));
      c.release();
      d.release();
      await assertNoLeak(server2);
      await assertNoLeak(server);
    } finally {
      await client.close();
      await server.close();
      await server2?.close();
    }
  });

  Deno.test(`client (${transport}): a socket dropped while holding and waiting resumes its session and reclaims its seats within grace`, async () => {
    const server = startServer({ config: conformanceConfiguration(), graceMs: 2_000 });
    const client = connectCoordinator(server.url, fast);
    try {
      const a = await admitted(client.acquire(queued()));
      const b = await admitted(client.acquire(queued()));
      const waiter = client.acquire(queued({ waitLimitMs: 5_000 }));
      await waitFor(() => server.host.stats.sessions === 1, "session open");
      const session = client.session;
      await server.dropClients();
      // The server cancels a closed connection's waiters: the client answers by policy at once.
      assert.equal((await waiter).admitted, false);
      // Released while disconnected: given back after the resume.
      assert.equal(a.release(), true);
      await waitFor(() => client.state === "connected", "reconnected");
      assert.equal(client.session, session, "the same session");
      assert.equal(client.stats.reclaimed, 1, "b was reclaimed");
      assert.equal(client.stats.lost, 0);
      await waitFor(() => client.stats.lateReleases === 1, "a released after the resume");
      // b is still held: one seat of two is free.
      const c = await admitted(client.acquire(queued()));
      assert.equal((await client.acquire(queued({ waitLimitMs: 0 }))).admitted, false);
      assert.equal(b.release(), true);
      c.release();
      await assertNoLeak(server);
      assert.equal(server.host.stats.lost, 0);
    } finally {
      await client.close();
      await server.close();
    }
  });

  Deno.test(`client (${transport}): back after the grace period, held seats are lost (counted), released by the server, never doubled`, async () => {
    const server = startServer({ config: conformanceConfiguration(), graceMs: 20 });
    const client = connectCoordinator(server.url, {
      ...fast,
      reconnect: { initialMs: 300, maxMs: 300 },
    });
    try {
      const a = await admitted(client.acquire(queued()));
      const session = client.session;
      await server.dropClients();
      await waitFor(() => server.host.stats.lost === 1, "the server released the seat");
      await waitFor(() => client.state === "connected", "reconnected");
      assert.notEqual(client.session, session, "a new session");
      assert.equal(client.stats.lost, 1);
      assert.equal(a.release(), false);
      await assertNoLeak(server);
    } finally {
      await client.close();
      await server.close();
    }
  });

  Deno.test(`client (${transport}): a stalled server (accepts, never answers) gets the policy within the deadline`, async () => {
    const server = startServer({ config: conformanceConfiguration(), mode: "stall" });
    const client = connectCoordinator(server.url, { ...fast, connectTimeoutMs: 5_000 });
    try {
      let started = performance.now();
      const r = await client.acquire(queued({ waitLimitMs: 100 }));
      assert.deepEqual(r, { admitted: false, reason: "unavailable", retryAfterSeconds: 1 });
      const took = since(started);
      assert.ok(took >= 290 && took < 600, `deadline 100 + 200 ms, took ${took} ms`);
      assert.equal(client.state, "connecting");
      await client.close();
      // The connect timeout gives up on a server that never welcomes.
      const impatient = connectCoordinator(server.url, { ...fast, connectTimeoutMs: 150 });
      started = performance.now();
      assert.equal((await impatient.acquire(queued())).admitted, false);
      assert.ok(since(started) < 1_000, `the connect timeout answered (${since(started)} ms)`);
      await impatient.close();
      assert.equal(server.host.stats.sessions, 0);
      await assertNoLeak(server);
    } finally {
      await client.close();
      await server.close();
    }
  });

  Deno.test(`client (${transport}): garbage and out-of-place frames from the server are counted and ignored`, async () => {
    const server = startServer({
      config: conformanceConfiguration(),
      mode: "garbage",
      garbage: [
        "not json",
        '{"t":"nope"}',
        '{"t":"decisions","d":[[1,"admitted",-1]]}',
        '{"t":"decisions","d":[[999999,"admitted",0]]}',
      ],
    });
    const client = connectCoordinator(server.url, fast);
    try {
      const a = await admitted(client.acquire(queued()));
      const b = await admitted(client.acquire(queued()));
      a.release();
      b.release();
      await waitFor(() => client.stats.framesReceived === server.framesOut, "frames delivered");
      // The three malformed ones of every frame, and the valid decision before the welcome.
      assert.ok(client.stats.garbage >= 3 * 3 + 1, `garbage counted: ${client.stats.garbage}`);
      assert.ok(client.stats.lateReleases >= 1, "a stray admission is released, never kept");
      assert.equal(client.stats.fallbacks, 0);
      await assertNoLeak(server);
    } finally {
      await client.close();
      await server.close();
    }
  });

  Deno.test(`client (${transport}): a wrong token is an error for every caller, never the policy's answer, and no retry`, async () => {
    const server = startServer({ config: conformanceConfiguration(), token: "s3cret" });
    // Even with the most permissive policy: a refused token must not admit past the shared limit.
    const client = connectCoordinator(server.url, {
      ...fast,
      token: "wrong-token",
      policy: "open",
    });
    try {
      await assert.rejects(client.ready(), (e: unknown) => {
        assert.ok(e instanceof CoordinatorRefusedError);
        assert.equal(e.url, server.url + "/");
        assert.match(e.message, /refused this client's token: wrong or missing token/);
        assert.ok(!e.message.includes("wrong-token"), "the token is never in a message");
        return true;
      });
      assert.equal(client.state, "refused");
      await assert.rejects(client.acquire(queued()), CoordinatorRefusedError);
      assert.equal(client.stats.fallbacks, 0);
      const frames = client.stats.framesSent;
      await sleep(200); // several backoffs of `fast`
      assert.equal(client.stats.framesSent, frames, "no new attempt");
      assert.equal(server.host.stats.sessions, 0);
      await assertNoLeak(server);
    } finally {
      await client.close();
      await server.close();
    }
    const ok = startServer({ config: conformanceConfiguration(), token: "s3cret" });
    const good = connectCoordinator(ok.url, { ...fast, token: "s3cret" });
    try {
      (await admitted(good.acquire(queued()))).release();
      await assertNoLeak(ok);
    } finally {
      await good.close();
      await ok.close();
    }
  });

  Deno.test(`client (${transport}): an admission arriving after the deadline is released at once, never leaked`, async () => {
    const server = startServer({ config: conformanceConfiguration(), decisionDelayMs: 300 });
    const client = connectCoordinator(server.url, { ...fast, deadlineMarginMs: 50 });
    try {
      const started = performance.now();
      const r = await client.acquire(queued({ waitLimitMs: 50 }));
      assert.equal(r.admitted, false);
      assert.ok(since(started) < 300, `answered at the deadline (${since(started)} ms)`);
      await waitFor(() => client.stats.lateReleases === 1, "the late seat released");
      await assertNoLeak(server);
    } finally {
      await client.close();
      await server.close();
    }
  });

  Deno.test(`client (${transport}): an abort through a signal function cancels a waiting request over the wire`, async () => {
    const server = startServer({ config: conformanceConfiguration() });
    const client = connectCoordinator(server.url, fast);
    try {
      const a = await admitted(client.acquire(queued()));
      const b = await admitted(client.acquire(queued()));
      const controller = new AbortController();
      let reads = 0;
      const w = client.acquire(queued(), {
        signal: () => {
          reads++;
          return controller.signal;
        },
      });
      await waitFor(
        () => server.coordinator.snapshot().levels.some((l) => l.queueSet.waitingRequests === 1),
        "queued",
      );
      controller.abort();
      const r = await w;
      assert.equal(r.admitted, false);
      assert.equal(!r.admitted && r.reason, "cancelled");
      assert.equal(reads, 1);
      a.release();
      b.release();
      await assertNoLeak(server);
    } finally {
      await client.close();
      await server.close();
    }
  });

  Deno.test(`client (${transport}): close() gives held seats back and answers waiters unavailable`, async () => {
    const server = startServer({ config: conformanceConfiguration() });
    const client = connectCoordinator(server.url, fast);
    try {
      const a = await admitted(client.acquire(queued()));
      await admitted(client.acquire(queued()));
      const w = client.acquire(queued());
      await client.close();
      assert.deepEqual(await w, { admitted: false, reason: "unavailable", retryAfterSeconds: 1 });
      assert.equal(a.release(), false);
      assert.equal(client.state, "closed");
      assert.equal((await client.acquire(queued())).admitted, false);
      await assertNoLeak(server);
    } finally {
      await client.close();
      await server.close();
    }
  });

  Deno.test(`client (${transport}): a server that never welcomes is dropped at the connect timeout, and retried`, async () => {
    const server = startServer({ config: conformanceConfiguration(), mode: "stall" });
    const client = connectCoordinator(server.url, { ...fast, connectTimeoutMs: 100 });
    try {
      assert.equal((await client.acquire(queued())).admitted, false);
      // Attempts go on: hello frames keep reaching the stalled server, one per attempt.
      await waitFor(() => server.framesIn >= 3, "three attempts");
      assert.notEqual(client.state, "connected");
    } finally {
      await client.close();
      await server.close();
    }
    assert.equal(server.host.stats.sessions, 0);
  });
}
