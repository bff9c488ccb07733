/**
 * The randomized fault run of the remote client: three
 * clients (policies `closed` and `local`) against a real loopback
 * coordinator server, thousands of random operations (acquires on every
 * kind of level, releases, double releases, early releases, aborts) mixed
 * with random faults (a client's socket dropped by the server, the whole
 * server restarted on the same port, garbage frames to a client, the
 * server's answers paused), and real short sleeps.
 *
 * Checked throughout: every acquire settles once, within its wait limit
 * plus the client's margin plus a little slack; no seat is handed out
 * twice; a seat's first release answers true unless the server took it
 * back. At checkpoints (every acquire settled, every client connected
 * again): each client holds exactly the seats its session holds on the
 * server, the server's seats in use are exactly the clients' live seats,
 * nothing waits, and `stats.lost` counts exactly the seats reported lost.
 * At the end, after every seat was released and every client closed, every
 * server (the retired ones too) is idle: no seat leaked.
 *
 * The random choices come from one seeded PRNG (`SEED`, printed in every
 * failure; run with `--allow-env=APF_FAULT_SEED` and `APF_FAULT_SEED=n` to
 * try another). Real time also shapes the run, so a seed reproduces the
 * operations and faults, not every interleaving.
 */

import assert from "node:assert/strict";
import { RemoteSeat } from "../../src/remote/remote_seat.ts";
import { connectCoordinator, type RemoteCoordinator } from "../../src/remote/client.ts";
import { EmbeddedCoordinator } from "../../src/coordinator/embedded.ts";
import { ServerConnection } from "../../src/server/server_connection.ts";
import { SessionHost } from "../../src/server/sessions.ts";
import type { Admission, Seat, SeatRequest } from "../../src/coordinator/types.ts";
import type { WireConfiguration } from "../../src/protocol/wire.ts";
import { effectiveFromWire } from "../../src/protocol/wire_configuration.ts";
import { assertIdle } from "../_helpers/coordinator_assert.ts";
import { limited } from "../_helpers/coordinator_config.ts";
import { sleep, within } from "../_helpers/real_time.ts";
import { faultSeed } from "../_helpers/fault_seed.ts";

/** The default seed; change it here, or set APF_FAULT_SEED with --allow-env=APF_FAULT_SEED. */
const DEFAULT_SEED = 0x0a9f_2024;
const SEED = faultSeed(DEFAULT_SEED);
/** Operations of the run (faults included). */
const OPS = 3_000;
/** Operations between two checkpoints. */
const CHECKPOINT_EVERY = 750;
const LEASE_MS = 400;
const GRACE_MS = 200;
const MARGIN_MS = 50;
/** Scheduling slack allowed past an acquire's deadline (a loaded machine's timers run late). */
const SLACK_MS = 400;
/** The wait limits of the acquires, in ms. */
const WAIT_LIMITS_MS = [0, 10, 40, 100, 150, 600];

/** mulberry32: a small seeded PRNG with uniform output in [0, 1). */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ServerCL 11: catch-all 5 seats (Reject), queued 2 (one queue of 3), sharded 2 (4 queues of 2,
// hand 2), rejecting 2 (Reject); exempt has no limit. The clients' `local` limiter gets half.
const WIRE: WireConfiguration = {
  serverConcurrencyLimit: 11,
  mandatoryOnly: true,
  objects: [
    limited("queued", { shares: 2, queuing: { queues: 1, handSize: 1, queueLengthLimit: 3 } }),
    limited("sharded", { shares: 2, queuing: { queues: 4, handSize: 2, queueLengthLimit: 2 } }),
    limited("rejecting", { shares: 2 }),
  ] as unknown as WireConfiguration["objects"],
};
const CONFIG = effectiveFromWire(WIRE)!;

const GARBAGE: (string | Uint8Array)[] = [
  "not json",
  "{",
  "[]",
  "null",
  '{"t":"nope"}',
  '{"t":"decisions"}',
  '{"t":"decisions","d":[[1,"admitted",-1]]}',
  '{"t":"decisions","d":[[1,"sideways",0]]}',
  '{"t":"error","code":"malformed"}',
  new Uint8Array([0x7b, 0x7d, 0xff]),
  // Well-formed, but out of place or about ids no acquire ever had.
  '{"t":"decisions","d":[[900000001,"admitted",0]]}',
  '{"t":"decisions","d":[[900000002,"rejected","queue-full",1],[900000003,"expired"]]}',
  '{"t":"error","code":"duplicate-id","message":"x","id":900000004}',
  '{"t":"welcome","v":1,"session":"s-forged","leaseMs":5,"graceMs":5,' +
  '"config":{"serverConcurrencyLimit":1,"mandatoryOnly":false,"objects":[]},"reclaimed":[1,2]}',
];

interface Conn {
  socket: WebSocket;
  conn: ServerConnection;
  /** Frames received while the server was stalled, handled when it resumes. */
  stalled: unknown[];
  closed: Promise<void>;
}

/**
 * A coordinator server on loopback with hooks for faults: drop a socket,
 * send garbage, stall (hold every received frame for a while).
 */
class FaultyServer {
  readonly coordinator = new EmbeddedCoordinator(CONFIG);
  readonly host = new SessionHost(this.coordinator, { leaseMs: LEASE_MS, graceMs: GRACE_MS });
  readonly conns = new Set<Conn>();
  readonly port: number;
  #server: Deno.HttpServer<Deno.NetAddr>;
  #closing = false;
  #stallTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(port: number) {
    this.#server = Deno.serve(
      { port, hostname: "127.0.0.1", onListen: () => {} },
      (req) => this.#accept(req),
    );
    this.port = this.#server.addr.port;
  }

  #accept(req: Request): Response {
    if (this.#closing) return new Response("closing", { status: 503 });
    const { socket, response } = Deno.upgradeWebSocket(req);
    const { promise, resolve } = Promise.withResolvers<void>();
    const conn = new ServerConnection({
      host: this.host,
      token: null,
      configuration: () => WIRE,
      send: (text) => {
        if (socket.readyState === WebSocket.OPEN) socket.send(text);
      },
      close: (code, reason) => socket.close(code, reason),
    });
    const c: Conn = { socket, conn, stalled: [], closed: promise };
    this.conns.add(c);
    socket.onmessage = (e) => {
      if (this.#stallTimer !== null) c.stalled.push(e.data);
      else conn.receive(e.data);
    };
    socket.onclose = () => {
      conn.closed();
      this.conns.delete(c);
      resolve();
    };
    return response;
  }

  get stalled(): boolean {
    return this.#stallTimer !== null;
  }

  /** The open connection of `session`. */
  connectionOf(session: string | null): ServerConnection | null {
    for (const c of this.conns) {
      if (c.conn.session !== null && c.conn.session.id === session) return c.conn;
    }
    return null;
  }

  /** Holds every frame received for `ms`, then handles them in order. */
  stall(ms: number): void {
    if (this.#stallTimer !== null) return;
    this.#stallTimer = setTimeout(() => {
      this.#stallTimer = null;
      for (const c of this.conns) {
        for (const data of c.stalled.splice(0)) c.conn.receive(data);
      }
    }, ms);
  }

  /** Closes one socket from the server side. */
  drop(c: Conn): void {
    // Deno forgets a close() made before the upgrade completed (the socket opens anyway).
    if (c.socket.readyState === WebSocket.CONNECTING) {
      c.socket.onopen = () => this.drop(c);
      return;
    }
    try {
      c.socket.close(1001, "dropped");
    } catch {
      // Already closing.
    }
  }

  /** Sends `frame` to the client of `c` (only after its welcome, so never before a real one). */
  garbage(c: Conn, frame: string | Uint8Array): boolean {
    if (c.conn.session === null || c.socket.readyState !== WebSocket.OPEN) return false;
    c.socket.send(frame);
    return true;
  }

  phase = "open";
  async close(): Promise<void> {
    this.phase = "closing sockets";
    this.#closing = true;
    if (this.#stallTimer !== null) clearTimeout(this.#stallTimer);
    this.#stallTimer = null;
    const closing = [...this.conns];
    for (const c of closing) this.drop(c);
    await Promise.all(closing.map((c) => c.closed));
    this.phase = "shutdown";
    this.host.close();
    this.coordinator.close();
    await this.#server.shutdown();
    this.phase = "closed";
  }
}

interface Held {
  client: number;
  seat: Seat;
  level: string;
  seats: number;
  /** `release()` or `initialized()` was called. */
  ended: boolean;
}

Deno.test(`client: a randomized fault run ends with every seat accounted for (seed ${SEED})`, async () => {
  const random = mulberry32(SEED);
  const int = (n: number) => Math.floor(random() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  const at = (op: number | string) => `seed ${SEED}, op ${op}`;
  const failures: string[] = [];
  const fail = (message: string) => {
    if (failures.length < 20) failures.push(message);
  };

  let server = new FaultyServer(0);
  const retired: FaultyServer[] = [];
  const url = `ws://127.0.0.1:${server.port}`;
  const policies = ["closed", "local", "local"] as const;
  const clients: RemoteCoordinator[] = policies.map((policy, i) =>
    connectCoordinator(url, {
      client: `c${i}`,
      policy,
      fallback: { configuration: CONFIG, fraction: 0.5 },
      deadlineMarginMs: MARGIN_MS,
      connectTimeoutMs: 500,
      reconnect: { initialMs: 5, maxMs: 60 },
      // The backoff's jitter has its own stream, so that reconnections do not shift the operations.
      random: mulberry32(SEED ^ (0x9e3779b9 + i)),
    })
  );
  const held: Held[] = [];
  const granted: RemoteSeat[][] = clients.map(() => []);
  const seenSeats = new WeakSet<Seat>();
  const seenIds = clients.map(() => new Set<number>());
  /** Acquires not yet settled, with what they were. */
  const inFlight = new Map<Promise<unknown>, string>();
  const controllers: AbortController[] = [];
  const counts: Record<string, number> = {};
  const count = (k: string) => counts[k] = (counts[k] ?? 0) + 1;
  let maxOvershootMs = -Infinity;
  const started = performance.now();

  const acquire = (op: number) => {
    const client = int(clients.length);
    const level = pick(["queued", "queued", "sharded", "rejecting", "catch-all", "exempt"]);
    const waitLimitMs = pick(WAIT_LIMITS_MS);
    const request: SeatRequest = {
      priorityLevel: level,
      flowSchema: level === "exempt" ? "exempt" : "catch-all",
      distinguisher: `flow-${int(5)}`,
      work: { initialSeats: random() < 0.15 ? 2 : 1 },
      waitLimitMs,
      ...(level === "sharded" && { flowHash: { hi: int(4), lo: int(2 ** 32) } }),
    };
    let options = {};
    const r = random();
    if (r < 0.05) {
      options = { signal: AbortSignal.abort() };
    } else if (r < 0.2) {
      const controller = new AbortController();
      controllers.push(controller);
      options = { signal: controller.signal };
    }
    const t0 = performance.now();
    let settled = 0;
    const p = clients[client]!.acquire(request, options).then((a: Admission) => {
      settled++;
      const took = performance.now() - t0;
      maxOvershootMs = Math.max(maxOvershootMs, took - waitLimitMs - MARGIN_MS);
      if (settled !== 1) fail(`${at(op)}: acquire settled ${settled} times`);
      if (took > waitLimitMs + MARGIN_MS + SLACK_MS) {
        fail(`${at(op)}: acquire (wait limit ${waitLimitMs} ms) answered after ${took} ms`);
      }
      if (!a.admitted) {
        count(`rejected ${a.reason}`);
        return;
      }
      if (seenSeats.has(a.seat)) fail(`${at(op)}: a seat handed out twice`);
      seenSeats.add(a.seat);
      if (a.seat instanceof RemoteSeat) {
        count("admitted by the server");
        if (seenIds[client]!.has(a.seat.id)) fail(`${at(op)}: seat ${a.seat.id} granted twice`);
        seenIds[client]!.add(a.seat.id);
        granted[client]!.push(a.seat);
      } else {
        count("admitted locally");
      }
      held.push({ client, seat: a.seat, level, seats: request.work!.initialSeats!, ended: false });
    }, (e: unknown) => fail(`${at(op)}: acquire rejected with ${e}`));
    inFlight.set(
      p,
      `op ${op}: c${client} ${JSON.stringify(request)}${
        "signal" in options ? " with a signal" : ""
      }`,
    );
    p.finally(() => inFlight.delete(p));
  };

  const end = (op: number, h: Held, how: "release" | "twice" | "initialized") => {
    const lost = h.seat instanceof RemoteSeat && h.seat.lost;
    if (how === "initialized") {
      h.seat.initialized();
      if (h.seat.release()) fail(`${at(op)}: release after initialized() answered true`);
    } else {
      const first = h.seat.release(random() < 0.5 ? { executionMs: int(50) } : undefined);
      if (first !== !lost) fail(`${at(op)}: first release answered ${first}, lost ${lost}`);
      if (how === "twice" && h.seat.release()) fail(`${at(op)}: second release answered true`);
    }
    h.ended = true;
    held.splice(held.indexOf(h), 1);
  };

  /** Every acquire settled, every client connected, client and server agree on every seat. */
  const settled = (op: number | string) =>
    within(
      Promise.all([...inFlight.keys()]),
      2 * Math.max(...WAIT_LIMITS_MS) + 2 * SLACK_MS,
      () =>
        `${at(op)}: acquires never settled: ${[...inFlight.values()].join("; ")}; ` +
        clients.map((c, i) => `c${i} ${c.state} ${JSON.stringify(c.stats)}`).join("; "),
    );

  const checkpoint = async (op: number | string) => {
    await settled(op);
    const deadline = performance.now() + 5_000;
    let problem: string | null = "";
    while (problem !== null) {
      assert.ok(
        performance.now() < deadline,
        `${at(op)}: client and server never agreed: ${problem}`,
      );
      await sleep(5);
      problem = disagreement();
    }
    assert.deepEqual(failures, [], at(op));
    for (const [i, c] of clients.entries()) {
      const lost = granted[i]!.filter((s) => s.lost).length;
      assert.equal(c.stats.lost, lost, `${at(op)}: c${i} stats.lost counts the lost seats`);
    }
  };

  const disagreement = (): string | null => {
    const inUse = new Map<string, number>();
    for (const [i, c] of clients.entries()) {
      if (c.state !== "connected") return `c${i} is ${c.state}`;
      const conn = server.connectionOf(c.session);
      if (conn === null || conn.session === null) return `c${i}'s session is not connected`;
      const live = granted[i]!.filter((s) => !s.done).map((s) => s.id).sort((a, b) => a - b);
      const onServer = conn.session.held.sort((a, b) => a - b);
      if (live.join() !== onServer.join()) {
        return `c${i} holds [${live}], its session [${onServer}]`;
      }
      if (conn.session.waiting !== 0) return `c${i}'s session has ${conn.session.waiting} waiting`;
    }
    for (const h of held) {
      if (h.seat instanceof RemoteSeat && !h.seat.done) {
        inUse.set(h.level, (inUse.get(h.level) ?? 0) + h.seats);
      }
    }
    for (const l of server.coordinator.snapshot().levels) {
      const qs = l.queueSet;
      if (qs.waitingRequests !== 0) return `${l.name} has ${qs.waitingRequests} waiting`;
      if (l.name === "exempt") continue;
      if (qs.seatsInUse !== (inUse.get(l.name) ?? 0)) {
        return `${l.name} has ${qs.seatsInUse} seats in use, the clients hold ${
          inUse.get(l.name) ?? 0
        }`;
      }
    }
    return null;
  };

  try {
    for (let op = 0; op < OPS; op++) {
      const r = random();
      if (r < 0.4) {
        acquire(op);
      } else if (r < 0.62) {
        const h = held.length > 0 ? pick(held) : null;
        if (h !== null) end(op, h, random() < 0.2 ? "twice" : "release");
      } else if (r < 0.66) {
        const h = held.length > 0 ? pick(held) : null;
        if (h !== null) end(op, h, "initialized");
      } else if (r < 0.72) {
        if (controllers.length > 0) controllers.splice(int(controllers.length), 1)[0]!.abort();
      } else if (r < 0.8) {
        await sleep(int(4));
      } else if (r < 0.808) {
        count("fault: socket dropped");
        const conns = [...server.conns];
        if (conns.length > 0) server.drop(pick(conns));
      } else if (r < 0.818) {
        count("fault: garbage");
        const conns = [...server.conns];
        if (conns.length > 0) {
          const c = pick(conns);
          for (let n = 1 + int(3); n > 0; n--) server.garbage(c, pick(GARBAGE));
        }
      } else if (r < 0.823) {
        count("fault: stall");
        // Now and then longer than a lease and the grace period: seats expire,
        // sessions of dropped sockets end before their client's hello gets through.
        server.stall(random() < 0.25 ? LEASE_MS + int(LEASE_MS / 2) : 20 + int(150));
      } else if (r < 0.826) {
        count("fault: restart");
        const old = server;
        await within(
          old.close(),
          3_000,
          () =>
            `${at(op)}: the server closes (${old.phase}; sockets ${
              [...old.conns].map((c) => c.socket.readyState)
            })`,
        );
        assertIdle(old.coordinator.snapshot());
        assert.equal(old.host.stats.sessions, 0, at(op));
        retired.push(old);
        server = new FaultyServer(old.port);
      } else if (held.length > 12) {
        end(op, pick(held), "release");
      }
      // Let the sockets and timers run now and then; most operations pile up in one tick.
      if (op % 8 === 0) await sleep(0);
      if (op % CHECKPOINT_EVERY === CHECKPOINT_EVERY - 1) await checkpoint(op);
    }
    // The end: everything given back, every waiter answered.
    for (const c of controllers.splice(0)) c.abort();
    for (const h of [...held]) end(OPS, h, "release");
    await checkpoint("end");
    for (const [i, c] of clients.entries()) {
      const s = c.stats;
      for (const [k, v] of Object.entries(s)) {
        assert.ok(Number.isSafeInteger(v) && v >= 0, `${at("end")}: c${i} stats.${k} = ${v}`);
      }
      assert.ok(s.garbage <= s.framesReceived, `${at("end")}: c${i} garbage within frames`);
      assert.ok(s.lost <= granted[i]!.length, `${at("end")}: c${i} lost within granted`);
    }
  } finally {
    await within(
      Promise.all(clients.map((c) => c.close())),
      3_000,
      () => `${at("end")}: the clients close`,
    );
    await settled("end");
  }
  try {
    // Closed clients' sessions wait out their grace, then end: nothing may be left.
    const deadline = performance.now() + 3_000;
    while (server.host.stats.sessions > 0) {
      assert.ok(performance.now() < deadline, `${at("end")}: sessions ended after grace`);
      await sleep(10);
    }
    for (const s of [...retired, server]) {
      try {
        assertIdle(s.coordinator.snapshot());
      } catch (e) {
        throw new assert.AssertionError({ message: `${at("end")}: a seat leaked: ${e}` });
      }
    }
  } finally {
    await server.close();
  }
  assert.deepEqual(failures, [], at("end"));
  // The run exercised what it is for (printed only if it did not: the output stays quiet).
  const summary = () =>
    `seed ${SEED}: ${OPS} operations in ${
      Math.round(performance.now() - started)
    } ms, ${retired.length} restarts; ${JSON.stringify(counts)}; largest answer past the deadline ${
      Math.round(maxOvershootMs)
    } ms; ${clients.map((c, i) => `c${i} ${JSON.stringify(c.stats)}`).join("; ")}`;
  assert.ok(retired.length >= 1, `no restart happened: ${summary()}`);
  for (const outcome of ["admitted by the server", "admitted locally"]) {
    assert.ok((counts[outcome] ?? 0) > 0, `never ${outcome}: ${summary()}`);
  }
});
