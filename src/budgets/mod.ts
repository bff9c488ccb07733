/**
 * Seat budgets: a level's seats divided among holders (isolates,
 * processes) that decide locally on their share, kept in a ledger that a
 * store (Deno KV, Redis, a Durable Object, `apf coordinator`) writes with
 * compare and set. See `ledger.ts` for the rule that keeps a level within
 * its limit.
 *
 * @module
 */

export { allocateBudgets, headroom, type HolderDemand, maxMinShares } from "./allocate.ts";
export {
  type HolderState,
  type LeaseTerms,
  type Ledger,
  type LedgerEntry,
  type ReadLedger,
  type RecoveryMark,
  settle,
  type Settlement,
} from "./ledger.ts";
export { type LedgerView, LineWatch, type SuspectLine, type WindowTerms } from "./line_watch.ts";
export { type BudgetStore, type StoredLedger, StoreRefusedError } from "./store.ts";
export { MemoryBudgetStore } from "./memory_store.ts";
export { BudgetHolder, type BudgetHolderOptions, type LevelBudget } from "./holder.ts";
export { HttpBudgetStore, type HttpBudgetStoreOptions } from "./http_store.ts";
export { budgetStoreHandler, type BudgetStoreHandlerOptions } from "./http_store_handler.ts";
export { MAX_TERM_MS, parseLedger, readLedger } from "./ledger_schema.ts";
