/**
 * A budget holder's own metrics, read at every scrape: each level's share,
 * the lease left, whether the policy answers, and the store's operations.
 *
 * @module
 */

import type { Registry } from "../observe/registry.ts";
import type { LevelBudget } from "./holder.ts";

/** What the metrics read. */
export interface BudgetMetricsSource {
  /** Each level's budget now. */
  budgets(): LevelBudget[];
  /** Settles written, conflicts, failures, since the holder started. */
  stats(): { settles: number; conflicts: number; failures: number };
  /** Wall-clock time, in ms. */
  now(): number;
}

/** Registers the `apf_budget_*` metrics in `registry`, read from `source` at every scrape. */
export function budgetMetrics(registry: Registry, source: BudgetMetricsSource): void {
  const seats = registry.gauge({
    name: "apf_budget_seats",
    help:
      "Seats of each priority level on this budget holder, by kind: limit (over every holder), target (fair share), claim (in the ledger), capacity (usable now)",
    labelNames: ["priority_level", "kind"],
  });
  const lease = registry.gauge({
    name: "apf_budget_lease_remaining_seconds",
    help: "Time left on this holder's lease of each priority level's share (0: none)",
    labelNames: ["priority_level"],
  });
  const policy = registry.gauge({
    name: "apf_budget_policy_in_force",
    help: "1 while the unreachable policy answers for the priority level (no lease), else 0",
    labelNames: ["priority_level"],
  });
  const operations = registry.counter({
    name: "apf_budget_store_operations_total",
    help:
      "Settles of this holder with its store, by result: settled, conflict (another holder wrote first), failed",
    labelNames: ["result"],
  });
  const counted = { settles: 0, conflicts: 0, failures: 0 };
  registry.onCollect(() => {
    const now = source.now();
    for (const b of source.budgets()) {
      seats.labels(b.level, "limit").set(b.limit);
      seats.labels(b.level, "target").set(b.target);
      seats.labels(b.level, "claim").set(b.claim);
      seats.labels(b.level, "capacity").set(Math.min(b.capacity, Number.MAX_SAFE_INTEGER));
      lease.labels(b.level).set(
        b.mode === "budget" && b.leaseEndsAt !== null
          ? Math.max(0, (b.leaseEndsAt - now) / 1000)
          : 0,
      );
      policy.labels(b.level).set(b.mode === "budget" ? 0 : 1);
    }
    const stats = source.stats();
    for (
      const [key, result] of [["settles", "settled"], ["conflicts", "conflict"], [
        "failures",
        "failed",
      ]] as const
    ) {
      operations.labels(result).inc(stats[key] - counted[key]);
      counted[key] = stats[key];
    }
  });
}
