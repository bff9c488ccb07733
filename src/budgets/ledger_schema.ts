/**
 * Checking a ledger that comes from outside (a store, a request): every
 * engine reads JSON that another process wrote. What is written must be a
 * ledger whole (`parseLedger`: an error with a clear message, never a
 * holder computing with `NaN`). What is read is taken line by line
 * (`readLedger`): a line that is not one a holder could write is set apart
 * as a suspect, so that whoever can write to the store cannot stall the
 * level with one bad line.
 *
 * @module
 */

import { z } from "zod";
import { type Ledger, type LedgerEntry, NO_LEDGER, type ReadLedger } from "./ledger.ts";
import type { SuspectLine } from "./line_watch.ts";

/** The longest lease or drain time a line may carry, in ms (an hour). */
export const MAX_TERM_MS = 3_600_000;

const seats = z.number().finite().min(0);
const term = z.number().finite().min(0).max(MAX_TERM_MS);

const entry = z.object({
  claim: seats,
  demand: seats,
  average: seats.optional(),
  deviation: seats.optional(),
  limit: seats,
  beat: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  leaseMs: term.min(1),
  drainMs: term,
  // Display only; a time JavaScript can show.
  expiresAt: z.number().finite().min(-8.64e15).max(8.64e15),
});

const mark = z.object({
  id: z.string().min(1).max(256),
  by: z.string().max(256),
  at: z.number().finite(),
});

const ledgerSchema = z.object({
  holders: z.record(z.string(), entry),
  recovery: mark.optional(),
});

/**
 * `value` as a {@linkcode Ledger}, whole: what a holder writes.
 *
 * @throws {TypeError} naming the first problem, with `where` (for example
 * the store and the level) in front.
 */
export function parseLedger(value: unknown, where: string): Ledger {
  const parsed = ledgerSchema.safeParse(value);
  if (parsed.success) return parsed.data as Ledger;
  throw new TypeError(`${where}: not a budget ledger${describe(parsed.error.issues[0]!)}`);
}

/**
 * `value` as read from a store: its valid lines, and the others as
 * suspects (holding the seats of their claim when it is a number). A value
 * that is not a ledger at all reads as one with no line, and one suspect,
 * {@linkcode NO_LEDGER}, that holds nothing.
 */
export function readLedger(value: unknown): ReadLedger {
  const holders: Record<string, LedgerEntry> = {};
  const suspects: SuspectLine[] = [];
  const whole = isRecord(value) && isRecord(value.holders);
  if (!whole) {
    suspects.push({ id: NO_LEDGER, reason: "not a budget ledger (no holders)", seats: 0 });
  }
  const raw = whole ? value.holders as Record<string, unknown> : {};
  for (const [id, line] of Object.entries(raw)) {
    const parsed = entry.safeParse(line);
    if (parsed.success) {
      holders[id] = parsed.data as LedgerEntry;
      continue;
    }
    const claim = isRecord(line) ? line.claim : undefined;
    suspects.push({
      id,
      reason: `not a line a holder writes${describe(parsed.error.issues[0]!)}`,
      seats: typeof claim === "number" && claim > 0 ? Math.min(claim, Number.MAX_SAFE_INTEGER) : 0,
    });
  }
  const recovery = isRecord(value) ? mark.safeParse(value.recovery) : null;
  const ledger: Ledger = recovery?.success ? { holders, recovery: recovery.data } : { holders };
  return suspects.length === 0 ? { ledger } : { ledger, suspects };
}

function describe(issue: z.core.$ZodIssue): string {
  const at = issue.path.length === 0 ? "" : ` at ${issue.path.join(".")}`;
  return `${at}: ${issue.message}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
