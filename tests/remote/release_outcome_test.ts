/**
 * How a seat's work ended crosses the wire (protocol version 2,
 * `src/protocol/PROTOCOL.md`) to a coordinator server that learns its limit
 * (`apf coordinator --server-concurrency auto`, `docs/adaptive.md`): a
 * remote seat released with an outcome reaches the server's controller; a
 * release without one, a version-1 client's, counts as served; an outcome
 * that is none is refused like any malformed message, and changes nothing.
 * A real server (`serveCoordinator`) and real WebSockets on loopback; the
 * server's time, which the controller learns on, is a fake clock.
 */

import assert from "node:assert/strict";
import { serveCoordinator } from "../../src/deno/mod.ts";
import { connectCoordinator } from "../../src/remote/client.ts";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import type { Seat, SeatRequest } from "../../src/coordinator/types.ts";
import { limited } from "../_helpers/coordinator_config.ts";
import { waitFor } from "../_helpers/real_time.ts";

const hostname = "127.0.0.1";

/** One level of 95 shares: 3 seats of its own at the pinned limit of 3, none to lend. */
const configuration = {
  flowSchemas: [],
  priorityLevels: [
    limited("work", { shares: 95, queuing: { queues: 1, handSize: 1, queueLengthLimit: 50 } }),
  ],
};

const request: SeatRequest = { priorityLevel: "work", flowSchema: "catch-all" };

function startServer() {
  const clock = new FakeEventClock(1000);
  const server = serveCoordinator({
    listen: { hostname, port: 0 },
    configuration,
    mandatoryOnly: true,
    serverConcurrencyLimit: { minRttRequests: 3, initial: 40 },
    clock,
  });
  const seatsInUse = () =>
    server.coordinator.snapshot().levels.find((l) => l.name === "work")!.queueSet.seatsInUse;
  /** The value of metric `name` (no labels), as exposed. */
  const metric = (name: string) =>
    new RegExp(`^${name} (\\S+)$`, "m").exec(server.metrics.registry.expose())?.[1];
  return { clock, server, seatsInUse, metric, url: `ws://${hostname}:${server.addr.port}/` };
}

/** A WebSocket speaking the protocol by hand (a client of another version); resolves once open. */
async function rawClient(url: string) {
  const socket = new WebSocket(url);
  const messages: Record<string, unknown>[] = [];
  socket.onmessage = (e) => messages.push(JSON.parse(e.data));
  const closed = new Promise<void>((resolve) => socket.onclose = () => resolve());
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = reject;
  });
  const send = (message: unknown) => socket.send(JSON.stringify(message));
  /** Waits for a message of type `t` after the first `after`. */
  const next = async (t: string, after: number) => {
    await waitFor(() => messages.slice(after).some((m) => m.t === t), `a ${t} message`);
    return messages.slice(after).find((m) => m.t === t)!;
  };
  return { messages, send, next, close: () => (socket.close(), closed) };
}

Deno.test("a remote seat's outcome reaches the coordinator server's learned limit; a version-1 release counts as served", async () => {
  const { clock, server, seatsInUse, metric, url } = startServer();
  const client = connectCoordinator(url, { policy: "closed", client: "gateway" });
  try {
    await client.ready();
    clock.advance(1000);
    assert.equal(metric("apf_adaptive_min_rtt_calculation_active"), "1", "the minRTT is measured");
    assert.equal(metric("apf_adaptive_concurrency_limit"), "3");
    /** `n` seats held `heldMs` on the server's clock, released as `release` says. */
    const hold = async (n: number, heldMs: number, release: (seat: Seat) => void) => {
      const admissions = await Promise.all(
        Array.from({ length: n }, () => client.acquire(request)),
      );
      const seats = admissions.map((a) => {
        assert.ok(a.admitted, JSON.stringify(a));
        return a.seat;
      });
      clock.advance(heldMs);
      for (const seat of seats) release(seat);
      await waitFor(() => seatsInUse() === 0, "the releases at the server");
    };
    // Released without an outcome: served. Three of them measure the minRTT.
    for (let i = 0; i < 3; i++) await hold(1, 40, (seat) => seat.release());
    assert.equal(metric("apf_adaptive_min_rtt_seconds"), "0.04");
    assert.equal(metric("apf_adaptive_concurrency_limit"), "40", "the limit restored");
    const windowEnds = clock.now() + 1000;

    // A window of refusals (the upstream's 503s): slower than any served request.
    await hold(4, 30, (seat) => seat.release({ outcome: "rejected" }));
    clock.advanceTo(windowEnds);
    assert.equal(metric("apf_adaptive_sample_rtt_seconds"), "+Inf");
    // At the gradient's floor: 0.5 · 40 + sqrt(20) ≈ 24.
    assert.equal(metric("apf_adaptive_concurrency_limit"), "24");

    // A client of version 1 states no outcome: its release counts as served, at its latency.
    const old = await rawClient(url);
    old.send({ t: "hello", v: [1], token: null, client: "old", resume: null });
    assert.equal((await old.next("welcome", 0)).v, 1);
    old.send({ t: "ops", ops: [["acquire", 1, request]] });
    const decided = await old.next("decisions", 1);
    assert.deepEqual(decided.d, [[1, "admitted", 0]]);
    clock.advance(40);
    old.send({ t: "ops", ops: [["release", 1, null]] });
    await waitFor(() => seatsInUse() === 0, "the old client's release");
    clock.advanceTo(windowEnds + 1000);
    assert.equal(metric("apf_adaptive_sample_rtt_seconds"), "0.04");
    assert.equal(metric("apf_adaptive_concurrency_limit"), "24", "not raised: demand was low");
    await old.close();
  } finally {
    await client.close();
    await server.shutdown();
  }
});

Deno.test("a release whose outcome is none is refused as malformed, and the seat stays held", async () => {
  const { server, seatsInUse, url } = startServer();
  const raw = await rawClient(url);
  try {
    raw.send({ t: "hello", v: [1, 2], token: null, client: "raw", resume: null });
    assert.equal((await raw.next("welcome", 0)).v, 2, "the newest version both speak");
    raw.send({ t: "ops", ops: [["acquire", 1, request]] });
    await raw.next("decisions", 1);
    assert.equal(seatsInUse(), 1);
    raw.send({ t: "ops", ops: [["release", 1, null, "overload"]] });
    const error = await raw.next("error", 2);
    assert.equal(error.code, "malformed");
    assert.match(String(error.message), /^ops message at ops\.0: /);
    assert.equal(seatsInUse(), 1, "nothing released");
    assert.match(
      server.metrics.registry.expose(),
      /^apf_coordinator_refused_frames_total\{code="malformed"\} 1$/m,
    );
    // Well-formed, the same release goes through.
    raw.send({ t: "ops", ops: [["release", 1, null, "error"]] });
    await waitFor(() => seatsInUse() === 0, "the release");
  } finally {
    await raw.close();
    await server.shutdown();
  }
});
