/**
 * How a release states the way its seat's work ended
 * ({@linkcode ReleaseOptions.outcome}, `docs/adaptive.md`): the check of a
 * stated outcome, what a receiver that ignores what it cannot read keeps of
 * one, and release options made once per outcome, so that a data path that
 * states an outcome with every release allocates nothing for it.
 *
 * @module
 */

import { SAMPLE_OUTCOMES, type SampleOutcome } from "../adaptive/types.ts";
import { show } from "../_shared/show.ts";
import type { ReleaseOptions } from "./types.ts";

/** Whether `value` is one of the {@linkcode SAMPLE_OUTCOMES} (compared one by one: a release's hot path). */
export function isSampleOutcome(value: unknown): value is SampleOutcome {
  return value === "ok" || value === "error" || value === "rejected" || value === "timeout";
}

/**
 * The outcome `options` state, or `undefined` when they state none.
 *
 * @throws {TypeError} when it is not one of the {@linkcode SAMPLE_OUTCOMES}.
 */
export function releaseOutcomeOf(options: ReleaseOptions | undefined): SampleOutcome | undefined {
  const outcome = options?.outcome;
  if (outcome === undefined || isSampleOutcome(outcome)) return outcome;
  throw new TypeError(
    `Cannot release a seat: outcome must be one of ${
      SAMPLE_OUTCOMES.map((o) => JSON.stringify(o)).join(", ")
    }, got ${show(outcome)}`,
  );
}

/**
 * `value` when it is an outcome, else `undefined` (no outcome stated): for
 * a receiver that ignores a field it cannot read, as the level objects
 * ignore an `executionMs` that is not a number.
 */
export function knownOutcome(value: unknown): SampleOutcome | undefined {
  return isSampleOutcome(value) ? value : undefined;
}

/** Release options, one per outcome. */
export type ReleasedAs = Readonly<Record<SampleOutcome, Readonly<ReleaseOptions>>>;

/** The release options stating each outcome, frozen: one object per outcome, shared. */
export const RELEASED_AS: ReleasedAs = Object.freeze({
  ok: Object.freeze({ outcome: "ok" }),
  error: Object.freeze({ outcome: "error" }),
  rejected: Object.freeze({ outcome: "rejected" }),
  timeout: Object.freeze({ outcome: "timeout" }),
});

/**
 * The options of a release with `executionMs` and `outcome`, each when
 * given: `undefined` for neither, and a shared object ({@linkcode RELEASED_AS})
 * for an outcome alone.
 */
export function releaseOptions(
  executionMs: number | undefined,
  outcome: SampleOutcome | undefined,
): ReleaseOptions | undefined {
  if (executionMs === undefined) return outcome === undefined ? undefined : RELEASED_AS[outcome];
  return outcome === undefined ? { executionMs } : { executionMs, outcome };
}
