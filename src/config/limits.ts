/**
 * Effective concurrency limits of priority levels (Kubernetes:
 * `finishQueueSetReconfigsLocked` in `apf_controller.go`;
 * `docs/semantics.md` §2.6): how a server concurrency limit is divided
 * among levels by their shares.
 *
 * @module
 */

import { roundHalfAwayFromZero } from "../_shared/numbers.ts";
import { DEFAULT_HAND_SIZE, DEFAULT_NOMINAL_CONCURRENCY_SHARES } from "./defaults.ts";
import type { PriorityLevelConfiguration } from "./types.ts";
import { checkNumber } from "../_shared/errors.ts";

/** The limits of one priority level, in seats. */
export interface LevelLimits {
  /** The level's shares (`nominalConcurrencyShares`). */
  shares: number;
  /** NominalCL = ceil(ServerCL · shares / Σshares). */
  nominal: number;
  /** LendableCL = round(NominalCL · lendablePercent / 100). */
  lendable: number;
  /** BorrowingCL = round(NominalCL · borrowingLimitPercent / 100), or ServerCL when unset. */
  borrowing: number;
  /** MinCL = NominalCL − LendableCL. */
  min: number;
  /** MaxCL = NominalCL + BorrowingCL. */
  max: number;
  /** Largest width of one request (queuing levels only). */
  maxSeats?: number;
  /** The limit a new level starts with: NominalCL − floor(LendableCL / 2). */
  initialCurrent: number;
}

/** Shares of a level, with the v1 defaults for unset values. */
export function sharesOf(pl: PriorityLevelConfiguration): number {
  if (pl.spec.type === "Exempt") return pl.spec.exempt?.nominalConcurrencyShares ?? 0;
  return pl.spec.limited?.nominalConcurrencyShares ?? DEFAULT_NOMINAL_CONCURRENCY_SHARES;
}

function lendablePercentOf(pl: PriorityLevelConfiguration): number {
  return (pl.spec.type === "Exempt" ? pl.spec.exempt : pl.spec.limited)?.lendablePercent ?? 0;
}

/**
 * Computes the limits of every level for `serverConcurrencyLimit` seats,
 * in the order given.
 *
 * @example
 * ```ts
 * import { bootstrapConfiguration } from "@apf/edge";
 * import { computeLevelLimits } from "./mod.ts";
 * const limits = computeLevelLimits(bootstrapConfiguration().priorityLevels, 600);
 * ```
 */
export function computeLevelLimits(
  levels: readonly PriorityLevelConfiguration[],
  serverConcurrencyLimit: number,
): LevelLimits[] {
  checkNumber(
    serverConcurrencyLimit,
    (n) => Number.isInteger(n) && n > 0,
    () =>
      `Cannot compute limits: server concurrency limit must be a positive integer, got ${serverConcurrencyLimit}`,
  );
  const shareSum = levels.reduce((sum, pl) => sum + sharesOf(pl), 0);
  return levels.map((pl) => {
    const shares = sharesOf(pl);
    const nominal = shareSum === 0 ? 0 : Math.ceil((serverConcurrencyLimit * shares) / shareSum);
    const lendable = roundHalfAwayFromZero((nominal * lendablePercentOf(pl)) / 100);
    const borrowingPercent = pl.spec.limited?.borrowingLimitPercent;
    const borrowing = borrowingPercent === undefined
      ? serverConcurrencyLimit
      : roundHalfAwayFromZero((nominal * borrowingPercent) / 100);
    const limits: LevelLimits = {
      shares,
      nominal,
      lendable,
      borrowing,
      min: nominal - lendable,
      max: nominal + borrowing,
      initialCurrent: nominal - Math.floor(lendable / 2),
    };
    const queuing = pl.spec.limited?.limitResponse.queuing;
    if (pl.spec.type === "Limited" && queuing !== undefined) {
      // Max seats: at most 15% of the level, and no wider than one hand of queues.
      const handSize = queuing.handSize ?? DEFAULT_HAND_SIZE;
      limits.maxSeats = Math.max(
        1,
        Math.min(Math.ceil(nominal * 0.15), Math.trunc(nominal / handSize)),
      );
    }
    return limits;
  });
}
