/**
 * A Worker for the Miniflare smoke test: a Hono app in front of one Durable Object class,
 * `SmokeObject`, exercising what the Cloudflare adapter will rely on: RPC methods returning
 * an `RpcTarget` (a lease, released explicitly or by disposal), an alarm, and WebSockets
 * accepted with the Hibernation API.
 *
 * @module
 */

// @ts-types="../../../src/cloudflare/_workers_types.d.ts"
import { DurableObject, RpcTarget } from "cloudflare:workers";
import type {
  AlarmInvocationInfo,
  DurableObjectNamespace,
  WebSocketPairConstructor,
  WorkerdResponseInit,
  WorkerdWebSocket,
} from "../../../src/cloudflare/_workers_types.d.ts";
import { Hono } from "hono";
import { z } from "zod";

declare const WebSocketPair: WebSocketPairConstructor;

/** The Worker's bindings. */
export interface Env {
  SMOKE: DurableObjectNamespace<SmokeObject>;
  GREETING: string;
}

/** What `SmokeObject.stats()` reports. */
export interface SmokeStats {
  acquired: number;
  /** Leases released, by `release()` or by `[Symbol.dispose]`. */
  released: number;
  /** Leases released by `[Symbol.dispose]`. */
  releasedByDispose: number;
  /** Calls of a lease's `[Symbol.dispose]`, those that found it released included. */
  disposeCalls: number;
  alarms: number;
  sockets: number;
}

/** What a lease tells its Durable Object. */
export interface LeaseEvents {
  released(byDispose: boolean): void;
  disposed(): void;
}

/**
 * A lease handed out over RPC. `release()` gives it back once; `[Symbol.dispose]` (called by
 * the runtime when the caller's last stub goes away) releases it if `release()` was not called.
 */
export class Lease extends RpcTarget {
  #released = false;
  readonly #events: LeaseEvents;

  constructor(events: LeaseEvents) {
    super();
    this.#events = events;
  }

  /** Returns the lease; `true` the first time, `false` after. */
  release(): boolean {
    return this.#release(false);
  }

  [Symbol.dispose](): void {
    this.#events.disposed();
    this.#release(true);
  }

  #release(byDispose: boolean): boolean {
    if (this.#released) return false;
    this.#released = true;
    this.#events.released(byDispose);
    return true;
  }
}

/** The Durable Object: counts leases and alarms, echoes WebSocket messages. */
export class SmokeObject extends DurableObject<Env> {
  #acquired = 0;
  #released = 0;
  #releasedByDispose = 0;
  #disposeCalls = 0;
  #alarms = 0;

  /** A new lease; the caller must release or dispose it. */
  acquire(): Lease {
    this.#acquired++;
    return new Lease({
      released: (byDispose) => {
        this.#released++;
        if (byDispose) this.#releasedByDispose++;
      },
      disposed: () => void this.#disposeCalls++,
    });
  }

  stats(): SmokeStats {
    return {
      acquired: this.#acquired,
      released: this.#released,
      releasedByDispose: this.#releasedByDispose,
      disposeCalls: this.#disposeCalls,
      alarms: this.#alarms,
      sockets: this.ctx.getWebSockets().length,
    };
  }

  /** Runs the alarm's body now, as the runtime would when the alarm fires. */
  async runAlarm(): Promise<SmokeStats> {
    await this.alarm();
    return this.stats();
  }

  /** Schedules the alarm `delayMs` from now. */
  async scheduleAlarm(delayMs: number): Promise<void> {
    await this.ctx.storage.setAlarm(Date.now() + delayMs);
  }

  override async alarm(_info?: AlarmInvocationInfo): Promise<void> {
    this.#alarms++;
    await this.ctx.storage.put("alarms", this.#alarms);
  }

  override fetch(request: Request): Response {
    if (request.headers.get("Upgrade") !== "websocket") {
      return new Response("expected a WebSocket upgrade", { status: 426 });
    }
    const pair = new WebSocketPair();
    this.ctx.acceptWebSocket(pair[1]);
    const init: WorkerdResponseInit = { status: 101, webSocket: pair[0] };
    return new Response(null, init);
  }

  override webSocketMessage(ws: WorkerdWebSocket, message: string | ArrayBuffer): void {
    const text = typeof message === "string" ? message : `${message.byteLength} bytes`;
    ws.send(JSON.stringify({ echo: text, stats: this.stats() }));
  }

  override webSocketClose(ws: WorkerdWebSocket, code: number, reason: string): void {
    ws.close(code, reason);
  }
}

const LeaseReply = z.object({ released: z.boolean(), again: z.boolean() });

const app = new Hono<{ Bindings: Env }>();

/**
 * Takes a lease of the object `name` over RPC and releases it twice (the second is a no-op);
 * with `?release=no`, only drops its stub, leaving the release to `[Symbol.dispose]`.
 */
app.get("/lease/:name", async (c) => {
  const stub = c.env.SMOKE.getByName(c.req.param("name"));
  let reply = { released: false, again: false };
  {
    using lease = await stub.acquire();
    if (c.req.query("release") !== "no") {
      reply = LeaseReply.parse({ released: await lease.release(), again: await lease.release() });
    }
  }
  return c.json({ ...reply, greeting: c.env.GREETING, stats: await stub.stats() });
});

/** Hands a WebSocket upgrade to the object `name`. */
app.get("/ws/:name", (c) => c.env.SMOKE.getByName(c.req.param("name")).fetch(c.req.raw));

export default app;
