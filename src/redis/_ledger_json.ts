/**
 * A ledger as JSON text, checked both ways: what is written is a ledger,
 * and what is read is one too (a key that another program or an older
 * version wrote is reported, never settled on).
 *
 * @module
 */

import type { Ledger } from "../budgets/ledger.ts";

const FIELDS = ["claim", "demand", "limit", "expiresAt"] as const;

/** What is wrong with `value` as a ledger, or `null` when it is one. */
export function ledgerProblem(value: unknown): string | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return "it is not an object";
  }
  const holders = (value as { holders?: unknown }).holders;
  if (typeof holders !== "object" || holders === null || Array.isArray(holders)) {
    return "its holders are not an object";
  }
  for (const [id, entry] of Object.entries(holders)) {
    if (typeof entry !== "object" || entry === null) {
      return `holder ${JSON.stringify(id)} has no entry`;
    }
    for (const field of FIELDS) {
      const n = (entry as Record<string, unknown>)[field];
      if (typeof n !== "number" || !Number.isFinite(n) || (field !== "expiresAt" && n < 0)) {
        return `holder ${JSON.stringify(id)}'s ${field} is not a ${
          field === "expiresAt" ? "finite" : "non-negative"
        } number (${JSON.stringify(n) ?? "missing"})`;
      }
    }
  }
  return null;
}

/**
 * Parses a stored ledger.
 *
 * @throws {Error} naming what is wrong with it.
 */
export function parseLedger(text: string): Ledger {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error("it is not JSON");
  }
  const problem = ledgerProblem(value);
  if (problem !== null) throw new Error(problem);
  return value as Ledger;
}
