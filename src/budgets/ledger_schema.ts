/**
 * Checking a ledger that comes from outside (a store, a request): every
 * engine reads JSON that another process wrote, and a malformed ledger must
 * be an error with a clear message, never a holder computing with `NaN`.
 *
 * @module
 */

import { z } from "zod";
import type { Ledger } from "./ledger.ts";

const seats = z.number().finite().min(0);

const entry = z.object({
  claim: seats,
  demand: seats,
  average: seats.optional(),
  deviation: seats.optional(),
  limit: seats,
  expiresAt: z.number().finite(),
});

const ledgerSchema = z.object({ holders: z.record(z.string(), entry) });

/**
 * `value` as a {@linkcode Ledger}.
 *
 * @throws {TypeError} naming the first problem, with `where` (for example
 * the store and the level) in front.
 */
export function parseLedger(value: unknown, where: string): Ledger {
  const parsed = ledgerSchema.safeParse(value);
  if (parsed.success) return parsed.data as Ledger;
  const issue = parsed.error.issues[0]!;
  const at = issue.path.length === 0 ? "" : ` at ${issue.path.join(".")}`;
  throw new TypeError(`${where}: not a budget ledger${at}: ${issue.message}`);
}
