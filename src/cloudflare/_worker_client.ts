/**
 * The client kit's transport over Workers RPC (`src/remote/seat_transport.ts`):
 * each acquire is one call to its level's Durable Object, whose seat comes
 * back as a stub kept by the kit's id until the seat is released,
 * initialized or lost. Nothing else: deadlines, the policy, late releases
 * and lease renewal are the kit's. Internal to the Cloudflare adapter.
 *
 * @module
 */

import type { Rejected, SeatRequest } from "../coordinator/types.ts";
import type { SampleOutcome } from "../adaptive/types.ts";
import { releaseOptions } from "../coordinator/release_outcome.ts";
import type { SeatTransport, TransportEvents } from "../remote/seat_transport.ts";
import type { Liveness } from "./_level_host.ts";

/** A seat as a level object hands it over RPC. */
export interface SeatRpc {
  /** `outcome`: how the seat's work ended, for a learned limit (an older object ignores it). */
  release(options?: { executionMs?: number; outcome?: SampleOutcome }): unknown;
  initialized(): unknown;
  renew(): boolean | Promise<boolean>;
}

/** A level object's answer to `acquire` over RPC. */
export type RpcAdmission =
  | { admitted: true; seat: SeatRpc; waitedMs: number; leaseMs: number }
  | Rejected;

/** What the Worker calls on a level object. */
export interface LevelRpc {
  acquire(request: SeatRequest, liveness: Liveness): Promise<RpcAdmission>;
}

/** Makes the call on `stub` (errors ignored: the object's lease takes the seat back), then lets go of it. */
async function finish(stub: SeatRpc, call?: (stub: SeatRpc) => unknown): Promise<void> {
  try {
    await call?.(stub);
  } catch {
    // The lease takes the seat back.
  }
  try {
    (stub as Partial<Disposable>)[Symbol.dispose]?.();
  } catch {
    // Already gone.
  }
}

/**
 * One RPC call per operation, each on its own: always `connected`, a
 * failure reported per call. No cancel: a queued caller's liveness tells
 * the object it went away.
 */
export class RpcTransport implements SeatTransport {
  readonly state = "connected";
  readonly cancel = null;
  #leaseMs = 30_000;
  #stubs = new Map<number, SeatRpc>();
  #level: (name: string) => LevelRpc;
  #liveness: (signal: AbortSignal | undefined) => Liveness;
  #events: TransportEvents;
  #onError: () => void;

  /**
   * Seats from `level(name)`'s object; `liveness(signal)` makes the pulse
   * handed with each acquire; `onError` counts a failed call the policy answered.
   */
  constructor(
    level: (name: string) => LevelRpc,
    liveness: (signal: AbortSignal | undefined) => Liveness,
    events: TransportEvents,
    onError: () => void,
  ) {
    this.#level = level;
    this.#liveness = liveness;
    this.#events = events;
    this.#onError = onError;
  }

  get leaseMs(): number {
    return this.#leaseMs;
  }

  acquire(id: number, request: SeatRequest, signal: AbortSignal | undefined): void {
    let call: Promise<RpcAdmission>;
    try {
      call = this.#level(request.priorityLevel).acquire(request, this.#liveness(signal));
    } catch (e) {
      call = Promise.reject(e);
    }
    call.then((a) => {
      if (!a.admitted) return this.#events.decided(id, a);
      this.#leaseMs = a.leaseMs;
      this.#stubs.set(id, a.seat);
      this.#events.decided(id, { admitted: true, waitedMs: a.waitedMs });
    }, (e: unknown) => {
      if (this.#events.failed(id, e)) this.#onError();
    });
  }

  release(id: number, executionMs: number | null, outcome?: SampleOutcome): void {
    const options = releaseOptions(executionMs ?? undefined, outcome);
    this.#end(id, (s) => s.release(options));
  }

  initialized(id: number): void {
    this.#end(id, (s) => s.initialized());
  }

  renew(id: number): void {
    const stub = this.#stubs.get(id);
    if (stub === undefined) return;
    new Promise<boolean>((resolve) => resolve(stub.renew())).catch(() => false).then((ok) => {
      if (ok || this.#stubs.get(id) !== stub) return;
      this.#end(id);
      this.#events.expired(id);
    });
  }

  #end(id: number, call?: (stub: SeatRpc) => unknown): void {
    const stub = this.#stubs.get(id);
    if (stub === undefined) return;
    this.#stubs.delete(id);
    void finish(stub, call);
  }
}
