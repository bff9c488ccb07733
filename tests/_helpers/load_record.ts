/**
 * What real processes under load did, on the harness's monotonic clock: the
 * requests in flight at an upstream over time (in total and per gateway),
 * each gateway's 200s with when they were sent and answered, and the gaps,
 * stalls and first answers read from them (`budget_faults.ts`).
 */

import { systemClock } from "../../src/fairqueuing/clock.ts";
import type { Gateway } from "./apf_gateway.ts";
import { flood } from "./flood.ts";

const now = () => systemClock.now();

/**
 * Every change of the requests in flight at the upstream, in total and per
 * gateway (the first segment of the request's path, like `/g0/...`).
 */
export class InFlight {
  #times: number[] = [];
  #totals: number[] = [];
  #who: string[] = [];
  #theirs: number[] = [];
  #by = new Map<string, number>();

  /** `testUpstream`'s `onActive`. */
  record = (active: number, change: 1 | -1, req: Request): void => {
    const gateway = new URL(req.url).pathname.split("/")[1] ?? "";
    const mine = (this.#by.get(gateway) ?? 0) + change;
    this.#by.set(gateway, mine);
    this.#times.push(now());
    this.#totals.push(active);
    this.#who.push(gateway);
    this.#theirs.push(mine);
  };

  /** The most in flight at once within [from, to]; of `gateway`'s requests only, if given. */
  peak(from = -Infinity, to = Infinity, gateway?: string): number {
    return this.#scan(from, to, gateway).peak;
  }

  /** When the total in flight first reached its peak within [from, to] (`from`: already there). */
  peakAt(from = -Infinity, to = Infinity): number {
    return this.#scan(from, to).at;
  }

  #scan(from: number, to: number, gateway?: string): { peak: number; at: number } {
    let peak = 0, at = from;
    for (let i = 0; i < this.#times.length && this.#times[i]! <= to; i++) {
      if (gateway !== undefined && this.#who[i] !== gateway) continue;
      const v = gateway === undefined ? this.#totals[i]! : this.#theirs[i]!;
      if (this.#times[i]! < from) peak = v; // the count as the window opens
      else if (v > peak) [peak, at] = [v, this.#times[i]!];
    }
    return { peak, at };
  }
}

/** A 200: when its request was sent, and when its answer was read. */
export interface Served {
  sent: number;
  done: number;
}

/** One gateway's load: closed-loop clients, each its own user. */
export interface GatewayLoad {
  served: Served[];
  rejected: number;
  errors: number;
  stop(): Promise<void>;
}

/**
 * `clients` closed-loop clients on `gateway`, each its own user, on the
 * path `/<gateway's name>/c<j>` (the upstream tells the gateways apart by it).
 */
export function equalLoad(gateway: Gateway, clients: number): GatewayLoad {
  const load = { served: [] as Served[], rejected: 0, errors: 0 };
  const floods = Array.from(
    { length: clients },
    (_, j) =>
      flood(`${gateway.url}/${gateway.name}/c${j}`, {
        user: `${gateway.name}-u${j}`,
        loops: 1,
        pauseMs: 20,
        onAnswer(status, sent, done) {
          if (status === 200) load.served.push({ sent, done });
          else if (status === 429) load.rejected++;
          else load.errors++;
        },
      }),
  );
  return Object.assign(load, {
    stop: () => Promise.all(floods.map((f) => f.stop())).then(() => {}),
  });
}

/** The 200s answered within [from, to]. */
export const servedWithin = (load: GatewayLoad, from: number, to: number): number =>
  load.served.filter((s) => s.done >= from && s.done <= to).length;

/** The longest time within [from, to] without a 200 (the window's ends count as bounds). */
export function longestGap(done: readonly number[], from: number, to: number): number {
  let last = from, gap = 0;
  for (const t of done) {
    if (t < from || t > to) continue;
    gap = Math.max(gap, t - last);
    last = t;
  }
  return Math.max(gap, to - last);
}

/** Time from `at` to the first 200 for a request sent at `at` or later (by `until`), or `null`. */
export function firstServedAfter(load: GatewayLoad, at: number, until = Infinity): number | null {
  const first = load.served.find((s) => s.sent >= at && s.done <= until);
  return first === undefined ? null : Math.round(first.done - at);
}

/**
 * The first stretch of at least `stallMs` without a 200 within [from, to]
 * (`done` sorted), and when the next 200 came (`null`: none by `to`); `null`
 * when there is none.
 */
export function findStall(
  done: readonly number[],
  from: number,
  to: number,
  stallMs: number,
): { from: number; resumedAt: number | null } | null {
  let last = from;
  for (const t of done) {
    if (t < from || t > to) continue;
    if (t - last >= stallMs) return { from: last, resumedAt: t };
    last = t;
  }
  return to - last >= stallMs ? { from: last, resumedAt: null } : null;
}
