/**
 * `@apf/edge/redis`: the Redis / Valkey engine of seat budgets,
 * {@linkcode RedisBudgetStore}, which keeps each priority level's ledger in
 * one key and writes it with an atomic Lua compare and set. It brings the
 * npm client `@redis/client`, which no other entry point imports. The
 * budget store's contract (`BudgetStore` and the ledger it keeps) and the
 * holder that uses it are in `@apf/edge`.
 *
 * @module
 */

export { RedisBudgetStore, type RedisBudgetStoreOptions } from "./redis_budget_store.ts";
