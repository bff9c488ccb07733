/**
 * The fair share a uniform scenario is judged against (`docs/semantics.md` §10.1): the
 * max-min fair allocation of the level's seats to the clients' demands, as
 * Kubernetes' queueset tests compute it (`fairAlloc` in `queueset_test.go`)
 * to check that each flow got what fair queuing promises.
 *
 * @module
 */

import type { Scenario } from "./types.ts";
import { checkNumber } from "../_shared/errors.ts";

/**
 * Divides `capacity` among `demands` max-min fairly ("water-filling"): every
 * demand gets the smaller of itself and a common level, and the level is the
 * highest one the capacity allows. Equivalently, each demand gets at most an
 * equal share, and what a small demand leaves unused is shared again among
 * the larger ones. When the demands fit, each gets exactly its demand.
 *
 * The result has one allocation per demand, in the same order.
 *
 * @throws {RangeError} when a demand is negative or not finite, or when the
 * capacity is negative or NaN ({TypeError}: not a number).
 *
 * @example
 * ```ts
 * import { fairAlloc } from "@apf/edge/sim";
 * fairAlloc([3, 7, 9, 1], 14); // [3, 5, 5, 1]
 * fairAlloc([1, 9, 7, 3], 21); // [1, 9, 7, 3]
 * ```
 */
export function fairAlloc(demands: readonly number[], capacity: number): number[] {
  checkNumber(
    capacity,
    (c) => c >= 0,
    () => `Cannot allocate: capacity must be a number >= 0, got ${String(capacity)}`,
  );
  demands.forEach((d, i) => {
    checkNumber(
      d,
      (n) => Number.isFinite(n) && n >= 0,
      () => `Cannot allocate: demand ${i} must be a finite number >= 0, got ${String(d)}`,
    );
  });
  // Smallest demands first: each either fits in the current equal share (and
  // leaves the rest for the larger ones) or does not, and then no later one does.
  const order = demands.map((_, i) => i).sort((a, b) => demands[a]! - demands[b]!);
  const alloc: number[] = new Array(demands.length).fill(0);
  let left = capacity;
  for (let k = 0; k < order.length; k++) {
    const i = order[k]!;
    const share = left / (order.length - k);
    const demand = demands[i]!;
    if (demand < share) {
      alloc[i] = demand;
      left -= demand;
      continue;
    }
    // Every remaining demand is at least this one: they all get the same
    // share, assigned at once so the unsatisfied ones are exactly equal.
    for (let j = k; j < order.length; j++) alloc[order[j]!] = share;
    break;
  }
  return alloc;
}

/**
 * Each client's seat demand in one half of a uniform scenario: the seats its
 * threads would hold if never delayed, `threads · initialSeats · exec /
 * (exec + think)` (Kubernetes' `uniformScenarioState.evalTo`). A split client
 * runs only its first `floor(threads / 2)` threads in the first half
 * (`half` 0) and all of them in the second (`half` 1). A client whose cycle
 * takes no time (`exec + think = 0`) demands all its threads' seats.
 *
 * The final seats held during the additional latency are not counted, as in
 * Kubernetes.
 *
 * @example
 * ```ts
 * import { fairAlloc, scenarioFromJson, uniformDemands } from "@apf/edge/sim";
 * const scenario = scenarioFromJson({ clients: [{ threads: 8, execMs: 1, thinkMs: 1 }] });
 * uniformDemands(scenario, 1); // [4]
 * fairAlloc(uniformDemands(scenario, 1), scenario.priorityLevel.concurrencyLimit); // [4]
 * ```
 */
export function uniformDemands(scenario: Scenario, half: 0 | 1): number[] {
  return scenario.clients.map((c) => {
    const threads = c.split && half === 0 ? Math.floor(c.threads / 2) : c.threads;
    const seats = threads * c.initialSeats;
    const cycle = c.execMs + c.thinkMs;
    return cycle === 0 ? seats : seats * c.execMs / cycle;
  });
}
