/**
 * How a level's seats are shared among its budget holders: max-min fair over
 * their demands, with the allocation borrowing between levels uses
 * (`computeConcurrencyAllocation`, Kubernetes' `conc_alloc.go`) given equal
 * targets, so that it fills every holder's demand up to a common level
 * (water-filling). Seats are whole: the shares are rounded down and the
 * seats left over go to the largest remainders, ties to the holder whose id
 * sorts first, so that every holder computes the same shares from the same
 * ledger.
 *
 * What nobody demands is shared in a second pass up to each holder's
 * headroom (a quarter of its demand, at least one seat, none for a holder
 * without demand), so that a load
 * growing slowly does not wait a period for each seat; the rest stays free,
 * for a holder that arrives or whose load jumps.
 *
 * @module
 */

import { computeConcurrencyAllocation } from "../config/fair_allocation.ts";

/** One holder's demand, in seats. */
export interface HolderDemand {
  /** The holder's id. */
  id: string;
  /** Seats it would use: in use and waiting, at their peak over the last period. */
  demand: number;
}

/** A holder's headroom over its demand: a quarter of it, at least one seat; none without demand. */
export function headroom(demand: number): number {
  return demand <= 0 ? 0 : Math.max(1, Math.ceil(demand / 4));
}

/**
 * Whole seats of `total` for each holder, at most its cap, max-min fair:
 * nobody gets less than min(its cap, what an equal split would give it),
 * and the sum is min(total, sum of caps).
 */
export function maxMinShares(total: number, caps: readonly number[]): number[] {
  const sumCaps = caps.reduce((a, b) => a + b, 0);
  const sum = Math.min(total, sumCaps);
  if (sum <= 0) return caps.map(() => 0);
  const { allocations } = computeConcurrencyAllocation(
    sum,
    caps.map((cap) => ({ lowerBound: 0, upperBound: cap, target: 1 })),
  );
  // Round down, then hand out what is left by largest remainder (never above a cap).
  const shares = allocations.map((a, i) => Math.min(caps[i]!, Math.floor(a + 1e-9)));
  let left = sum - shares.reduce((a, b) => a + b, 0);
  const order = allocations
    .map((a, i) => ({ i, rest: a - Math.floor(a + 1e-9) }))
    .sort((x, y) => y.rest - x.rest || x.i - y.i);
  while (left > 0) {
    let gave = false;
    for (const { i } of order) {
      if (left === 0) break;
      if (shares[i]! < caps[i]!) {
        shares[i]!++;
        left--;
        gave = true;
      }
    }
    if (!gave) break;
  }
  return shares;
}

/**
 * Each holder's target share of `total` seats (by id): max-min fair over the
 * demands, then what is left up to each holder's headroom, max-min fair too.
 * Holders are taken in id order, so the result does not depend on the order
 * given.
 */
export function allocateBudgets(
  total: number,
  holders: readonly HolderDemand[],
): Map<string, number> {
  const sorted = [...holders].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const demands = sorted.map((h) => Math.max(0, Math.ceil(h.demand)));
  const first = maxMinShares(total, demands);
  const rest = total - first.reduce((a, b) => a + b, 0);
  const second = maxMinShares(rest, demands.map((d) => headroom(d)));
  return new Map(sorted.map((h, i) => [h.id, first[i]! + second[i]!]));
}
