/**
 * The coordinator conformance suite against the Durable Object coordinator
 * in real workerd: the Worker-side `WorkerCoordinator` running in a Worker,
 * its seats from `PriorityLevelObject`s over Durable Object RPC
 * (`_fixtures/conformance_worker.ts`). The suite runs here, in Deno; a
 * `Coordinator` forwards its calls to the Worker over a WebSocket bridge,
 * one connection per case, each case with level objects of its own
 * (named `<case>:<level>`) in one workerd for the whole file.
 *
 * As in `remote_conformance_test.ts`, the suite moves its fake clock right
 * after starting operations, which reach the objects only later: the level
 * objects and the Worker-side coordinator run on fake clocks of their own,
 * which `settle()` moves up to the suite's once everything sent before was
 * delivered, so that operations made before an advance happen before time
 * moves, as in-process.
 */

import assert from "node:assert/strict";
import { RemoteSeat, type SeatOwner } from "../../src/remote/remote_seat.ts";
import type { CoordinatorSocket } from "../../src/remote/client_types.ts";
import type {
  AcquireOptions,
  Admission,
  Coordinator,
  SeatRequest,
} from "../../src/coordinator/types.ts";
import { noDelayWebSocket } from "../../src/deno/no_delay_websocket.ts";
import type { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import { assertIdle } from "../_helpers/coordinator_assert.ts";
import { conformanceConfiguration } from "../_helpers/coordinator_config.ts";
import { coordinatorConformance } from "../_helpers/coordinator_conformance.ts";
import type { BridgeReply, BridgeReport, BridgeRequest } from "./_fixtures/conformance_worker.ts";
import { MINIFLARE_TEST_OPTIONS, type StartedWorker, startWorker } from "./_miniflare.ts";

const NAME = "Durable Objects (workerd)";

let worker: Promise<StartedWorker> | null = null;
let cases = 0;
// Deno's WebSocket leaves Nagle's algorithm on: a release then a sync would wait ~40 ms.
const openWebSocket = noDelayWebSocket();

/** One workerd for every case, started by the first. */
function sharedWorker(): Promise<StartedWorker> {
  return worker ??= startWorker({
    entry: new URL("./_fixtures/conformance_worker.ts", import.meta.url),
    durableObjects: { LEVELS: "ConformanceLevelObject" },
  });
}

type Done = Extract<BridgeReply, { t: "done" }>;

/** An acquire waiting for its answer. */
interface Waiting {
  level: string;
  resolve(a: Admission): void;
  reject(e: unknown): void;
  done(): void;
}

/** The suite's coordinator: each call a message to the Worker's coordinator. */
class BridgeCoordinator implements Coordinator, SeatOwner {
  #clock: FakeEventClock;
  #socket: Promise<CoordinatorSocket>;
  #closing = false;
  #socketClosed = Promise.withResolvers<void>();
  #failure: Error | null = null;
  #nextId = 0;
  #waiting = new Map<number, Waiting>();
  #calls = new Map<number, PromiseWithResolvers<Done>>();

  constructor(clock: FakeEventClock) {
    this.#clock = clock;
    const id = `case${++cases}`;
    this.#socket = sharedWorker().then((w) =>
      new Promise<CoordinatorSocket>((resolve, reject) => {
        const url = new URL(`/bridge?case=${id}`, w.url);
        url.protocol = "ws:";
        const ws = openWebSocket(url.href);
        ws.onopen = () => resolve(ws);
        ws.onmessage = (e) => this.#receive(JSON.parse(String(e.data)) as BridgeReply);
        ws.onclose = () => {
          reject(new Error("The bridge's WebSocket closed"));
          this.#socketClosed.resolve();
          this.#fail(new Error("The bridge's WebSocket closed"));
        };
      })
    );
    this.#socket.catch((e) => this.#fail(e));
  }

  acquire(request: SeatRequest, options?: AcquireOptions): Promise<Admission> {
    const s = options?.signal;
    const signal = typeof s === "function" ? s() : s;
    const id = ++this.#nextId;
    return new Promise<Admission>((resolve, reject) => {
      const onAbort = () => this.#send({ t: "abort", id });
      const level = (request as Partial<SeatRequest> | null)?.priorityLevel;
      this.#waiting.set(id, {
        level: typeof level === "string" ? level : "",
        resolve,
        reject,
        done: () => signal?.removeEventListener("abort", onAbort),
      });
      if (signal !== undefined && !signal.aborted) signal.addEventListener("abort", onAbort);
      this.#send({ t: "acquire", id, request, aborted: signal?.aborted === true });
    });
  }

  /** A seat ended: tell the Worker's seat. */
  ended(seat: RemoteSeat, executionMs: number | null, initialized: boolean): void {
    this.#send(
      initialized ? { t: "initialized", id: seat.id } : { t: "release", id: seat.id, executionMs },
    );
  }

  /** Everything sent was delivered and answered; the Worker's clocks caught up with the suite's. */
  async settle(): Promise<void> {
    let { now } = await this.#call((n) => ({ t: "sync", n }));
    for (let i = 0; now < this.#clock.now(); i++) {
      assert.ok(i < 10, "the Worker's clocks catch up");
      ({ now } = await this.#call((n) => ({ t: "advance", n, to: this.#clock.now() })));
    }
  }

  /** What the case left in the Worker; the level objects' hosts are closed. */
  async report(): Promise<BridgeReport> {
    const { report } = await this.#call((n) => ({ t: "close", n }));
    assert.ok(report);
    return report;
  }

  /** Closes the connection; the Worker drops its coordinator. */
  async close(): Promise<void> {
    this.#closing = true;
    const ws = await this.#socket.catch(() => null);
    if (ws === null) return;
    ws.close(1000, "done");
    await this.#socketClosed.promise;
  }

  #call(message: (n: number) => BridgeRequest): Promise<Done> {
    const n = ++this.#nextId;
    if (this.#failure !== null) return Promise.reject(this.#failure);
    const call = Promise.withResolvers<Done>();
    this.#calls.set(n, call);
    this.#send(message(n));
    return call.promise;
  }

  #send(message: BridgeRequest): void {
    // In order: every send waits for the one socket.
    void this.#socket.then((ws) => ws.send(JSON.stringify(message)), () => {});
  }

  #receive(reply: BridgeReply): void {
    switch (reply.t) {
      case "done":
        this.#calls.get(reply.n)?.resolve(reply);
        this.#calls.delete(reply.n);
        return;
      case "failed":
        return this.#fail(new Error(`The bridge failed: ${reply.message}`));
    }
    const waiting = this.#waiting.get(reply.id);
    assert.ok(waiting, `an answer to acquire ${reply.id}`);
    this.#waiting.delete(reply.id);
    waiting.done();
    if (reply.t === "error") {
      const Class = reply.name === "TypeError"
        ? TypeError
        : reply.name === "RangeError"
        ? RangeError
        : Error;
      waiting.reject(new Class(reply.message));
    } else if (reply.admitted) {
      const seat = new RemoteSeat(this, reply.id, waiting.level, this.#clock.now());
      waiting.resolve({ admitted: true, seat, waitedMs: reply.waitedMs });
    } else {
      const { reason, retryAfterSeconds } = reply;
      waiting.resolve({ admitted: false, reason, retryAfterSeconds });
    }
  }

  #fail(error: Error): void {
    if (this.#failure !== null || this.#closing) return;
    this.#failure = error;
    for (const w of this.#waiting.values()) w.reject(error);
    this.#waiting.clear();
    for (const c of this.#calls.values()) c.reject(error);
    this.#calls.clear();
  }
}

coordinatorConformance(NAME, (config, clock) => {
  // The Worker serves its own copy of the suite's configuration.
  assert.deepEqual(config, conformanceConfiguration());
  const coordinator = new BridgeCoordinator(clock);
  return {
    coordinator,
    settle: () => coordinator.settle(),
    async close() {
      try {
        const report = await coordinator.report();
        for (const [name, object] of Object.entries(report.objects)) {
          assertIdle(object.snapshot);
          assert.equal(object.pendingTimers, 0, `no timer of ${name}'s object left behind`);
        }
        assert.equal(report.heldSeats, 0, "every seat went back");
        assert.equal(report.stats.fallbacks, 0, "every answer came from a level object");
        assert.equal(report.stats.errors, 0);
        assert.equal(report.pendingTimers, 0, "no timer of the Worker's coordinator left behind");
      } finally {
        await coordinator.close();
      }
      assert.equal(clock.pendingTimers, 0, "no timer left behind");
    },
  };
}, MINIFLARE_TEST_OPTIONS);

Deno.test({
  name: `${NAME} conformance: workerd stops`,
  ...MINIFLARE_TEST_OPTIONS,
  fn: async () => {
    await (await worker)?.dispose();
  },
});
