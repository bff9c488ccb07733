/**
 * `BudgetHolderObject`: a Durable Object that holds a share of every
 * priority level (seat budgets, `src/budgets/`) for the Workers of one
 * region, and decides their requests with the exact queue sets on it. The
 * level objects keep each level's ledger; the holder settles with them once
 * per period, whatever the request rate, so that a Worker's acquire is one
 * call to an object in its own region (`locationHint`) instead of one to a
 * level object that may be anywhere. A Worker isolate cannot queue requests
 * itself: workerd cancels a promise resolved from another request's
 * context, so the queue lives here.
 *
 * Its configuration comes from the `ControllerObject` when it
 * starts; each level's limit is held to the smallest of the live holders'
 * (the ledger's rule), and borrowing between levels runs over the holders.
 *
 * @module
 */

// @ts-types="./_workers_types.d.ts"
import { DurableObject, RpcTarget } from "cloudflare:workers";
import { BudgetHolder, type BudgetHolderOptions } from "../budgets/holder.ts";
import type { Admission, ReleaseOptions, Seat, SeatRequest } from "../coordinator/types.ts";
import { knownOutcome, releaseOptions } from "../coordinator/release_outcome.ts";
import type { SnapshotOptions } from "../fairqueuing/types.ts";
import type { CoordinatorSnapshot } from "../observe/types.ts";
import { effectiveFromWire } from "../protocol/wire_configuration.ts";
import type { Liveness } from "./_level_host.ts";
import { levelObjectsBudgetStore } from "./budgets.ts";
import { type ApfBindings, CONTROLLER_NAME } from "./env.ts";
import type { Rejected } from "../coordinator/types.ts";

/** A holder object's answer to `acquire`: the seat is an RPC target. */
export type HeldAdmission =
  | { admitted: true; seat: HeldSeatTarget; waitedMs: number; leaseMs: number }
  | Rejected;

/** How often a queued caller's liveness is checked, in ms. */
const LIVENESS_INTERVAL_MS = 1_000;

/**
 * The lease the Worker is told: the seat needs no renewal (it lives in this
 * object until released or until the Worker's request ends), so a long one.
 */
const SEAT_LEASE_MS = 60_000;

async function isAlive(liveness: Liveness): Promise<boolean> {
  try {
    return (await liveness.alive()) !== false;
  } catch {
    return false;
  }
}

/** A seat of a holder object, handed to the Worker by reference; released once. */
export class HeldSeatTarget extends RpcTarget {
  #seat: Seat;
  #done = false;

  /** Wraps `seat`. */
  constructor(seat: Seat) {
    super();
    this.#seat = seat;
  }

  /**
   * Gives the seat back (with the execution time the Worker measured, and
   * how its work ended for a learned limit; a value that is neither is
   * ignored). False after the first time.
   */
  release(options?: ReleaseOptions): boolean {
    if (this.#done) return false;
    this.#done = true;
    const given = typeof options === "object" && options !== null ? options : undefined;
    const ms = given?.executionMs;
    return this.#seat.release(
      releaseOptions(
        typeof ms === "number" && ms >= 0 && ms < Infinity ? ms : undefined,
        knownOutcome(given?.outcome),
      ),
    );
  }

  /** Watch-style early release (`docs/semantics.md` §5.5). */
  initialized(): void {
    if (this.#done) return;
    this.#done = true;
    this.#seat.initialized();
  }

  /** True while the seat is held: it needs no renewal. */
  renew(): boolean {
    return !this.#done;
  }

  /** Called by the runtime when the Worker's request ends: releases the seat if still held. */
  [Symbol.dispose](): void {
    this.release();
  }
}

/** The Durable Object holding one region's budgets. */
export class BudgetHolderObject extends DurableObject<ApfBindings> {
  #holder: Promise<BudgetHolder> | null = null;

  /**
   * The holder's options besides its store (default: none, the holder's
   * defaults: settled every second, leased for 5 s, the `local` policy). A
   * subclass overrides it: `return { periodMs: 500, policy: "closed" }`.
   */
  protected holderOptions(): Omit<BudgetHolderOptions, "store"> {
    return {};
  }

  /**
   * Asks for a seat, decided here on this region's budgets. `liveness`
   * lets the object drop a queued caller that went away. Resolves by the
   * request's wait limit; rejects with a `TypeError` or `RangeError` for a
   * malformed request.
   */
  async acquire(request: SeatRequest, liveness?: Liveness): Promise<HeldAdmission> {
    const holder = await this.#ready();
    const gone = new AbortController();
    const watch = liveness === undefined ? null : setInterval(async () => {
      if (!(await isAlive(liveness))) gone.abort();
    }, LIVENESS_INTERVAL_MS);
    let admission: Admission;
    try {
      admission = await holder.acquire(request, { signal: gone.signal });
    } finally {
      if (watch !== null) clearInterval(watch);
    }
    if (!admission.admitted) return admission;
    // A caller that waited may have gone meanwhile: its seat goes back at once.
    if (admission.waitedMs > 0 && liveness !== undefined && !(await isAlive(liveness))) {
      admission.seat.release();
      return { admitted: false, reason: "cancelled", retryAfterSeconds: 1 };
    }
    return {
      admitted: true,
      seat: new HeldSeatTarget(admission.seat),
      waitedMs: admission.waitedMs,
      leaseMs: SEAT_LEASE_MS,
    };
  }

  /** The region's queue sets, each level with its budget (`dump_*`). */
  async snapshot(options?: SnapshotOptions): Promise<CoordinatorSnapshot> {
    return (await this.#ready()).snapshot(options ?? {});
  }

  /** The holder's metrics, Prometheus text. */
  async metrics(): Promise<string> {
    return (await this.#ready()).metrics.registry.expose();
  }

  /** The holder, made on first use with the controller's configuration. */
  #ready(): Promise<BudgetHolder> {
    this.#holder ??= (async () => {
      const controller = this.env.APF_CONTROLLER.getByName(CONTROLLER_NAME);
      const stored = await controller.configuration();
      const configuration = effectiveFromWire(stored.configuration);
      if (configuration === null) {
        throw new TypeError(
          "Cannot hold budgets: the controller's configuration does not validate",
        );
      }
      const holder = new BudgetHolder(configuration, {
        id: `holder-${this.ctx.id.toString()}`,
        // A learned limit (`docs/adaptive.md`, "Shared seats"): each holder learns from its seats.
        ...(stored.adaptive !== undefined && { serverConcurrencyLimit: stored.adaptive }),
        ...this.holderOptions(),
        store: levelObjectsBudgetStore(this.env.APF_LEVELS),
      });
      await holder.ready();
      return holder;
    })().catch((e) => {
      this.#holder = null;
      throw e;
    });
    return this.#holder;
  }
}
