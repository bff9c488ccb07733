/**
 * `PriorityLevelObject`: the Durable Object holding one priority level's
 * queue set (`docs/semantics.md` §11.1). Workers reach it over RPC (`acquire`
 * returns a {@linkcode SeatTarget}); other processes over WebSocket with
 * the protocol of `src/protocol/PROTOCOL.md` (Hibernation API). Its limits
 * come from the {@linkcode ControllerObject}. Seats live in memory only: no
 * storage write on the request path; an object that restarts loses the
 * seats it held (their callers' releases then do nothing) and counts the
 * restart in `apf_level_object_starts`.
 *
 * @module
 */

// @ts-types="./_workers_types.d.ts"
import { DurableObject, RpcTarget } from "cloudflare:workers";
import type { SeatDemandReport } from "../coordinator/borrowing_controller.ts";
import type { Rejected, ReleaseOptions, SeatRequest } from "../coordinator/types.ts";
import type { SampleOutcome } from "../adaptive/types.ts";
import { knownOutcome } from "../coordinator/release_outcome.ts";
import { MAX_BATCH } from "../protocol/wire.ts";
import type { SnapshotOptions } from "../fairqueuing/types.ts";
import type { CoordinatorSnapshot, SessionsSnapshot } from "../observe/types.ts";
import type { StoredLedger } from "../budgets/store.ts";
import { parseLedger, readLedger } from "../budgets/ledger_schema.ts";
import type { ClientConnection } from "../server/seat_server.ts";
import type { LevelCollection } from "./_controller_host.ts";
import type { SessionAdmission } from "../server/sessions.ts";
import {
  LevelHost,
  type LevelHostOptions,
  type LevelUpdate,
  type Liveness,
} from "./_level_host.ts";
import type {
  DurableObjectState,
  WebSocketPairConstructor,
  WorkerdResponseInit,
  WorkerdWebSocket,
} from "./_workers_types.d.ts";
import { type ApfBindings, CONTROLLER_NAME } from "./env.ts";

declare const WebSocketPair: WebSocketPairConstructor;

/** Where a level object keeps its budget ledger. */
const LEDGER_KEY = "budget-ledger";

/** A level object's answer to `acquire`: the seat is an RPC target. */
export type LevelAdmission =
  | { admitted: true; seat: SeatTarget; waitedMs: number; leaseMs: number }
  | Rejected;

/**
 * A granted seat, handed to the Worker by reference. Released once: by
 * `release()`, by `initialized()` (watch-style early release), or when the
 * calling request ends and the runtime disposes of it.
 */
export class SeatTarget extends RpcTarget {
  #host: LevelHost;
  #id: number;
  #done = false;

  /** Seat `id` of `host`. */
  constructor(host: LevelHost, id: number) {
    super();
    this.#host = host;
    this.#id = id;
  }

  /**
   * Gives the seat back, with the execution time the Worker measured
   * (workerd's clock stands still while a request computes) and how its
   * work ended (for a learned limit, `docs/adaptive.md`); a value that is
   * neither is ignored. False after the first time.
   */
  release(options?: ReleaseOptions): boolean {
    if (this.#done) return false;
    this.#done = true;
    const given = typeof options === "object" && options !== null ? options : undefined;
    const ms = given?.executionMs;
    this.#host.release(
      this.#id,
      typeof ms === "number" && ms >= 0 && ms < Infinity ? ms : undefined,
      knownOutcome(given?.outcome),
    );
    return true;
  }

  /** Watch-style early release (`docs/semantics.md` §5.5). */
  initialized(): void {
    if (this.#done) return;
    this.#done = true;
    this.#host.initialized(this.#id);
  }

  /** Starts the lease again; false when the seat is gone (expired, released, object restarted). */
  renew(): boolean {
    return !this.#done && this.#host.renew(this.#id);
  }

  /** Called by the runtime when the Worker's request ends: releases the seat if still held. */
  [Symbol.dispose](): void {
    this.release();
  }
}

/** The Durable Object of one priority level. */
export class PriorityLevelObject extends DurableObject<ApfBindings> {
  #host: LevelHost;
  #starts = 0;
  #configuring: Promise<void> | null = null;
  #alarmAt: number | null = null;
  #sockets = new Map<WebSocket, ClientConnection>();

  /** Created by the runtime. */
  constructor(ctx: DurableObjectState, env: ApfBindings) {
    super(ctx, env);
    this.#host = this.createHost({ token: env.APF_TOKEN ?? null });
    const registry = this.#host.metrics.registry;
    const gauge = (name: string, help: string) =>
      registry.gauge({ name, help, labelNames: ["priority_level"] });
    const starts = gauge(
      "apf_level_object_starts",
      "Times this level object started; above 1, it restarted and lost the seats it held",
    );
    const granted = gauge(
      "apf_level_object_granted_seats",
      "Seats granted over RPC since the object started",
    );
    const abandoned = gauge(
      "apf_level_object_abandoned_requests",
      "Queued RPC callers found gone and dropped, since the object started",
    );
    registry.onCollect(() => {
      const level = this.#host.level;
      if (level === null) return;
      starts.labels(level).set(this.#starts);
      granted.labels(level).set(this.#host.stats.granted);
      abandoned.labels(level).set(this.#host.stats.abandoned);
    });
    // One storage write per start, never per request.
    void ctx.blockConcurrencyWhile(async () => {
      this.#starts = ((await ctx.storage.get<number>("starts")) ?? 0) + 1;
      await ctx.storage.put("starts", this.#starts);
    });
  }

  /**
   * Makes the {@linkcode LevelHost} this object serves with; the
   * constructor calls it once, with the options it reads from `env`. The
   * default is `new LevelHost(options)`: the system clock, seats leased for
   * 30 s, the configuration the controller pushes. A subclass overrides it
   * to serve with other options (a fake clock in tests, another lease
   * term): `return super.createHost({ ...options, leaseMs: 60_000 })`.
   *
   * It runs inside the base constructor, before the subclass's own fields
   * exist: keep nothing on `this` from here, and reach the host later
   * through {@linkcode PriorityLevelObject.host}.
   *
   * @param options What the object configured: the WebSocket clients' token.
   * @returns The host; the object never replaces it.
   */
  protected createHost(options: LevelHostOptions): LevelHost {
    return new LevelHost(options);
  }

  /**
   * The host made by {@linkcode PriorityLevelObject.createHost}, for a
   * subclass: for example to configure it with `update()` without a
   * controller, given a `resolve` option that supplies the configuration.
   */
  protected get host(): LevelHost {
    return this.#host;
  }

  /**
   * Asks for a seat of this level. `liveness` (an `RpcTarget` of the
   * caller with `alive()`) lets the object drop a queued caller that went
   * away. Resolves by the request's wait limit; rejects with a `TypeError`
   * or `RangeError` for a malformed request.
   */
  async acquire(request: SeatRequest, liveness?: Liveness): Promise<LevelAdmission> {
    await this.#configured(request?.priorityLevel);
    const a = await this.#host.acquire(request, liveness);
    if (!a.admitted) return a;
    await this.#armAlarm();
    return {
      admitted: true,
      seat: new SeatTarget(this.#host, a.seatId),
      waitedMs: a.waitedMs,
      leaseMs: a.leaseMs,
    };
  }

  /**
   * The batched form: many acquires in one call, answered together once
   * each is decided (callers that must not wait for a batch's slowest
   * member batch over the WebSocket instead). Seats come back as ids: give
   * them back with {@linkcode PriorityLevelObject.releaseMany}; one never
   * given back expires with its lease. At most 10,000 requests per call.
   */
  async acquireMany(requests: SeatRequest[], liveness?: Liveness): Promise<SessionAdmission[]> {
    if (!Array.isArray(requests) || requests.length > MAX_BATCH) {
      throw new TypeError(
        `Cannot acquire seats: requests must be an array of at most ${MAX_BATCH} requests`,
      );
    }
    if (requests.length === 0) return [];
    await this.#configured(requests[0]?.priorityLevel);
    const answers = await Promise.all(requests.map((r) => this.#host.acquire(r, liveness)));
    if (answers.some((a) => a.admitted)) await this.#armAlarm();
    return answers;
  }

  /**
   * Gives back seats of {@linkcode PriorityLevelObject.acquireMany}: ids,
   * `[id, executionMs]` pairs, or `[id, executionMs, outcome]` (how the
   * work ended, for a learned limit; `executionMs` may then be `null`).
   * Unknown or released ids are ignored, and so is an outcome that is none.
   */
  releaseMany(
    seats: Array<number | [number, number] | [number, number | null, SampleOutcome]>,
  ): void {
    if (!Array.isArray(seats) || seats.length > MAX_BATCH) {
      throw new TypeError(`Cannot release seats: seats must be an array of at most ${MAX_BATCH}`);
    }
    for (const s of seats) {
      if (typeof s === "number") this.#host.release(s);
      else if (Array.isArray(s)) {
        const ms = s[1];
        this.#host.release(
          s[0],
          typeof ms === "number" && ms >= 0 && ms < Infinity ? ms : undefined,
          knownOutcome(s[2]),
        );
      }
    }
  }

  /**
   * Seat budgets (`src/budgets/`): this level's ledger and its version, or
   * `null` before the first write. Kept in the object's storage, so that it
   * outlives a restart of the object.
   */
  async readLedger(): Promise<StoredLedger | null> {
    const stored = await this.ctx.storage.get<{ ledger: unknown; version: number }>(LEDGER_KEY);
    if (stored === undefined) return null;
    return { ...readLedger(stored.ledger), version: String(stored.version) };
  }

  /**
   * Seat budgets: writes `ledger` when the stored version is still
   * `expected` (`null`: none yet); resolves whether it did. The read and the
   * write are one step: the object delivers no other call while its storage
   * answers (input gates).
   *
   * @throws {TypeError} when `ledger` is not a budget ledger.
   */
  async writeLedger(expected: string | null, ledger: unknown): Promise<boolean> {
    const checked = parseLedger(ledger, "Cannot write the ledger");
    const stored = await this.ctx.storage.get<{ ledger: unknown; version: number }>(LEDGER_KEY);
    const current = stored === undefined ? null : String(stored.version);
    if (current !== expected) return false;
    await this.ctx.storage.put(LEDGER_KEY, {
      ledger: checked,
      version: (stored?.version ?? 0) + 1,
    });
    return true;
  }

  /** For the controller: a new configuration and/or limits. */
  update(level: string, update: LevelUpdate): void {
    this.#host.update(level, update);
  }

  /** For the controller: the level's seat demand since the previous call. */
  collectSeatDemand(): SeatDemandReport[] {
    return this.#host.collectSeatDemand();
  }

  /**
   * For the controller: the level's seat demand and, with a learned server
   * concurrency limit, its seats' latency samples, since the previous call.
   *
   * @internal Called by the {@linkcode ControllerObject} over RPC.
   */
  collect(): LevelCollection {
    return { demand: this.#host.collectSeatDemand(), samples: this.#host.collectSamples() };
  }

  /** The level's state (`dump_*`), or an empty snapshot before the object was configured. */
  snapshot(options?: SnapshotOptions): CoordinatorSnapshot {
    return this.#host.snapshot(options ?? {});
  }

  /**
   * The sessions and reclaimed seats (`dump_sessions`).
   *
   * @internal Called by `cloudflareAdminRoutes` over RPC.
   */
  sessions(): SessionsSnapshot | null {
    return this.#host.sessionsSnapshot();
  }

  /** The level's metrics, Prometheus text. */
  metrics(): string {
    return this.#host.metrics.expose();
  }

  /** Runs the alarm's body now (tests; the runtime calls `alarm()`). */
  async runAlarm(): Promise<void> {
    await this.alarm();
  }

  /** Takes back every seat whose lease is over, then waits for the next one. */
  override async alarm(): Promise<void> {
    this.#alarmAt = null;
    this.#host.expireDue();
    await this.#armAlarm();
  }

  /**
   * WebSocket clients (`connectCoordinator`, `src/protocol/PROTOCOL.md`) connect here with
   * `?level=NAME`; the Worker routes them.
   */
  override async fetch(request: Request): Promise<Response> {
    if (request.headers.get("Upgrade")?.toLowerCase() !== "websocket") {
      return new Response("This is an APF level object: connect with a WebSocket.\n", {
        status: 426,
      });
    }
    const level = new URL(request.url).searchParams.get("level");
    if (level === null || level === "") {
      return new Response("Missing ?level=NAME\n", { status: 400 });
    }
    await this.#configured(level);
    const pair = new WebSocketPair();
    const server = pair[1];
    this.ctx.acceptWebSocket(server);
    this.#sockets.set(
      server,
      this.#host.connect(
        (text) => server.send(text),
        (code, reason) => server.close(code, reason),
      ),
    );
    const init: WorkerdResponseInit = { status: 101, webSocket: pair[0] };
    return new Response(null, init);
  }

  /** A frame from a WebSocket client (Hibernation API). */
  override async webSocketMessage(ws: WorkerdWebSocket, message: string | ArrayBuffer) {
    const connection = this.#sockets.get(ws);
    if (connection === undefined) {
      // The object restarted (or hibernated) since the socket opened: its session is gone.
      ws.close(1012, "restarted: reconnect");
      return;
    }
    connection.receive(message);
    await this.#armAlarm();
  }

  /** A client's socket closed: its session keeps its seats for the grace period. */
  override webSocketClose(ws: WorkerdWebSocket): void {
    this.#sockets.get(ws)?.closed();
    this.#sockets.delete(ws);
  }

  /** A client's socket failed: as closed. */
  override webSocketError(ws: WorkerdWebSocket): void {
    this.webSocketClose(ws);
  }

  /** Makes sure the object serves `level` with the controller's configuration. */
  #configured(level: unknown): Promise<void> {
    if (this.#host.level !== null) return Promise.resolve();
    if (typeof level !== "string" || level === "") {
      return Promise.reject(new TypeError("Cannot acquire a seat: priorityLevel must be a name"));
    }
    this.#configuring ??= (async () => {
      try {
        const controller = this.env.APF_CONTROLLER.getByName(CONTROLLER_NAME);
        const update = await controller.levelUpdate();
        if (this.#host.level === null) this.#host.update(level, update);
      } finally {
        this.#configuring = null;
      }
    })();
    return this.#configuring;
  }

  /** An alarm at the next lease's end, as a net under the in-memory lease timer. */
  async #armAlarm(): Promise<void> {
    if (this.#alarmAt !== null) return;
    const delay = this.#host.nextLeaseInMs();
    if (delay === null) return;
    // On the host's clock, which need not be the system clock (see createHost).
    const at = Date.now() + delay;
    this.#alarmAt = at;
    await this.ctx.storage.setAlarm(at);
  }
}
