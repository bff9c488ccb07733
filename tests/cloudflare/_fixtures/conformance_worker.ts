/**
 * The Worker of the coordinator conformance suite against the Durable
 * Object coordinator (`do_conformance_test.ts`). Level objects are
 * {@linkcode ConformanceLevelObject}s (`conformance_level_object.ts`):
 * `PriorityLevelObject`s whose host runs on a fake clock and serves the
 * suite's configuration, without a controller. The Worker runs the real
 * `WorkerCoordinator` over them and lends it to the test through a
 * WebSocket bridge, one coordinator per connection (one per case, whose
 * level objects are named `<case>:<level>`): the test sends acquires,
 * releases and clock moves as JSON messages ({@linkcode BridgeRequest})
 * and reads the answers ({@linkcode BridgeReply}).
 *
 * The suite's fake clock is the test's. The level objects' clocks and the
 * coordinator's (deadlines, renewals) move only on `advance`, once every
 * operation sent before it has reached its object: `sync` and `advance`
 * are answered only when nothing is in flight between the Worker and the
 * objects, found by counting (acquires sent and received, answers given
 * and received, seat calls pending, liveness calls pending).
 *
 * @module
 */

import { CallerLiveness } from "../../../src/cloudflare/coordinator.ts";
import type { LevelRpc, SeatRpc } from "../../../src/cloudflare/_worker_client.ts";
import {
  WorkerCoordinator,
  type WorkerCoordinatorStats,
} from "../../../src/cloudflare/_worker_coordinator.ts";
import type {
  DurableObjectNamespace,
  WebSocketPairConstructor,
  WorkerdResponseInit,
  WorkerdWebSocket,
} from "../../../src/cloudflare/_workers_types.d.ts";
import type { Rejected, Seat, SeatRequest } from "../../../src/coordinator/types.ts";
import { FakeEventClock } from "../../../src/fairqueuing/clock.ts";
import { conformanceConfiguration } from "../../_helpers/coordinator_config.ts";
import type { ConformanceLevelObject, LevelObjectReport } from "./conformance_level_object.ts";

export { ConformanceLevelObject } from "./conformance_level_object.ts";

declare const WebSocketPair: WebSocketPairConstructor;

/** The Worker's bindings. */
export interface Env {
  LEVELS: DurableObjectNamespace<ConformanceLevelObject>;
}

/** What the test sends; `n` numbers the messages the bridge answers with `done`. */
export type BridgeRequest =
  | { t: "acquire"; id: number; request: unknown; aborted: boolean }
  | { t: "abort"; id: number }
  | { t: "release"; id: number; executionMs: number | null }
  | { t: "initialized"; id: number }
  | { t: "sync"; n: number }
  | { t: "advance"; n: number; to: number }
  | { t: "close"; n: number };

/** What the bridge answers. */
export type BridgeReply =
  | { t: "admission"; id: number; admitted: true; waitedMs: number }
  | ({ t: "admission"; id: number } & Rejected)
  | { t: "error"; id: number; name: string; message: string }
  | { t: "done"; n: number; now: number; report?: BridgeReport }
  | { t: "failed"; message: string };

/** The answer to `close`. */
export interface BridgeReport {
  stats: WorkerCoordinatorStats;
  /** Timers of the Worker-side coordinator's clock. */
  pendingTimers: number;
  /** Seats the Worker still held. */
  heldSeats: number;
  /** By level name. */
  objects: Record<string, LevelObjectReport>;
}

/** The levels of the suite's configuration: their objects' clocks move from the start. */
const LEVELS = conformanceConfiguration().priorityLevels.map((pl) => pl.name);

const errorOf = (e: unknown) => ({
  name: String((e as { name?: unknown } | null)?.name ?? "Error"),
  message: String((e as { message?: unknown } | null)?.message ?? e),
});

/** One connection's coordinator, its seats, and what is in flight to the level objects. */
class Bridge {
  #ws: WorkerdWebSocket;
  #env: Env;
  #prefix: string;
  #clock = new FakeEventClock();
  #coordinator: WorkerCoordinator;
  #seats = new Map<number, Seat>();
  #aborts = new Map<number, AbortController>();
  /** Acquires sent to, and answers received from, each level's object. */
  #levels = new Map<string, { sent: number; answered: number }>();
  #calls = new Set<Promise<unknown>>();
  #queue: Promise<void> = Promise.resolve();

  constructor(ws: WorkerdWebSocket, env: Env, prefix: string) {
    this.#ws = ws;
    this.#env = env;
    this.#prefix = prefix;
    for (const name of LEVELS) this.#counts(name);
    this.#coordinator = new WorkerCoordinator(
      (name) => this.#level(name),
      null,
      (signal) => new CallerLiveness(signal),
      { clock: this.#clock, policy: "closed" },
    );
  }

  /** Handles the messages in order; `sync`, `advance` and `close` hold the ones after them. */
  receive(text: string): void {
    const message = JSON.parse(text) as BridgeRequest;
    this.#queue = this.#queue.then(() => this.#handle(message)).catch((e) =>
      this.#send({ t: "failed", message: errorOf(e).message })
    );
  }

  /** The test closed the connection: whatever still waits is cancelled. */
  closed(): void {
    for (const controller of this.#aborts.values()) controller.abort();
    this.#coordinator.close();
  }

  async #handle(m: BridgeRequest): Promise<void> {
    switch (m.t) {
      case "acquire":
        return this.#acquire(m.id, m.request as SeatRequest, m.aborted);
      case "abort":
        return this.#aborts.get(m.id)?.abort();
      case "release":
      case "initialized": {
        const seat = this.#seats.get(m.id);
        if (seat === undefined) throw new Error(`No seat ${m.id} to ${m.t}`);
        this.#seats.delete(m.id);
        if (m.t === "initialized") seat.initialized();
        else seat.release(m.executionMs === null ? undefined : { executionMs: m.executionMs });
        return;
      }
      case "sync":
        await this.#quiet();
        return this.#send({ t: "done", n: m.n, now: this.#clock.now() });
      case "advance":
        // The objects first: the coordinator's deadlines are only a net under their decisions.
        await Promise.all([...this.#levels.keys()].map((name) => this.#stub(name).advanceTo(m.to)));
        await this.#quiet();
        this.#clock.advanceTo(m.to);
        await this.#quiet();
        return this.#send({ t: "done", n: m.n, now: this.#clock.now() });
      case "close": {
        await this.#quiet();
        const objects: Record<string, LevelObjectReport> = {};
        for (const name of this.#levels.keys()) objects[name] = await this.#stub(name).finish();
        this.#coordinator.close();
        const report: BridgeReport = {
          stats: { ...this.#coordinator.stats },
          pendingTimers: this.#clock.pendingTimers,
          heldSeats: this.#seats.size,
          objects,
        };
        return this.#send({ t: "done", n: m.n, now: this.#clock.now(), report });
      }
    }
  }

  #acquire(id: number, request: SeatRequest, aborted: boolean): void {
    const controller = new AbortController();
    if (aborted) controller.abort();
    else this.#aborts.set(id, controller);
    this.#coordinator.acquire(request, { signal: controller.signal }).then((a) => {
      this.#aborts.delete(id);
      if (a.admitted) {
        this.#seats.set(id, a.seat);
        this.#send({ t: "admission", id, admitted: true, waitedMs: a.waitedMs });
      } else {
        const { reason, retryAfterSeconds } = a;
        this.#send({ t: "admission", id, admitted: false, reason, retryAfterSeconds });
      }
    }, (e: unknown) => {
      this.#aborts.delete(id);
      this.#send({ t: "error", id, ...errorOf(e) });
    });
  }

  #stub(name: string) {
    return this.#env.LEVELS.getByName(this.#prefix + name);
  }

  #counts(name: string): { sent: number; answered: number } {
    let counts = this.#levels.get(name);
    if (counts === undefined) this.#levels.set(name, counts = { sent: 0, answered: 0 });
    return counts;
  }

  /** Level `name`'s object as the coordinator calls it, counting calls and answers. */
  #level(name: string): LevelRpc {
    const counts = this.#counts(name);
    const stub = this.#stub(name) as unknown as LevelRpc;
    return {
      acquire: (request, liveness) => {
        counts.sent++;
        return stub.acquire(request, liveness).then((a) => {
          counts.answered++;
          return a.admitted ? { ...a, seat: this.#tracked(a.seat) } : a;
        }, (e: unknown) => {
          counts.answered++;
          throw e;
        });
      },
    };
  }

  /** A seat's stub whose calls are counted until answered. */
  #tracked(seat: SeatRpc): SeatRpc & Disposable {
    const track = <T>(result: T): T => {
      const call = Promise.resolve(result).catch(() => {});
      this.#calls.add(call);
      void call.finally(() => this.#calls.delete(call));
      return result;
    };
    return {
      release: (executionMs) => track(seat.release(executionMs)),
      initialized: () => track(seat.initialized()),
      renew: () => track(seat.renew()),
      [Symbol.dispose]: () => (seat as Partial<Disposable>)[Symbol.dispose]?.(),
    };
  }

  /** Resolves once nothing is in flight between this Worker and the level objects. */
  async #quiet(): Promise<void> {
    for (let round = 0;; round++) {
      while (this.#calls.size > 0) await Promise.all([...this.#calls]);
      const behind: string[] = [];
      for (const [name, counts] of this.#levels) {
        const p = await this.#stub(name).probe();
        if (p.received !== counts.sent || p.answered !== counts.answered || p.checking !== 0) {
          behind.push(`${name}: object ${JSON.stringify(p)}, Worker ${JSON.stringify(counts)}`);
        }
      }
      if (behind.length === 0 && this.#calls.size === 0) return;
      if (round === 2_000) throw new Error(`The level objects do not settle: ${behind.join(", ")}`);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  }

  #send(reply: BridgeReply): void {
    if (this.#ws.readyState !== WebSocket.OPEN) return; // the test went away
    // Snapshots may hold bigints (virtual times).
    this.#ws.send(JSON.stringify(reply, (_, v) => typeof v === "bigint" ? String(v) : v));
  }
}

export default {
  /** `GET /bridge?case=ID` with a WebSocket upgrade: a coordinator whose objects are `ID:level`. */
  fetch(request: Request, env: Env): Response {
    const url = new URL(request.url);
    const id = url.searchParams.get("case");
    if (url.pathname !== "/bridge" || id === null) {
      return new Response("Not found\n", { status: 404 });
    }
    if (request.headers.get("Upgrade")?.toLowerCase() !== "websocket") {
      return new Response("Expected a WebSocket upgrade\n", { status: 426 });
    }
    const pair = new WebSocketPair();
    const server = pair[1];
    server.accept();
    const bridge = new Bridge(server, env, `${id}:`);
    server.addEventListener("message", (e) => bridge.receive(String(e.data)));
    server.addEventListener("close", () => {
      bridge.closed();
      server.close(1000, "bye");
    });
    const init: WorkerdResponseInit = { status: 101, webSocket: pair[0] };
    return new Response(null, init);
  },
};
