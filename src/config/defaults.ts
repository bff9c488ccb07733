/**
 * Defaulting of `flowcontrol.apiserver.k8s.io/v1` objects (kubernetes/kubernetes
 * `pkg/apis/flowcontrol/v1/defaults.go`). Each function returns a new object;
 * its input is left untouched.
 *
 * @module
 */

import type {
  FlowSchema,
  LimitedPriorityLevelConfiguration,
  PriorityLevelConfiguration,
  PriorityLevelConfigurationSpec,
  QueuingConfiguration,
} from "./types.ts";

/** `matchingPrecedence` given to a FlowSchema that has none (or 0). */
export const DEFAULT_MATCHING_PRECEDENCE = 1000;
/** `nominalConcurrencyShares` of a Limited level that has none. */
export const DEFAULT_NOMINAL_CONCURRENCY_SHARES = 30;
/** Queues of a queuing level that has none (or 0). */
export const DEFAULT_QUEUES = 64;
/** Hand size of a queuing level that has none (or 0). */
export const DEFAULT_HAND_SIZE = 8;
/** Queue length limit of a queuing level that has none (or 0). */
export const DEFAULT_QUEUE_LENGTH_LIMIT = 50;

/** A FlowSchema with `matchingPrecedence` 0 or absent set to 1000. */
export function defaultFlowSchema(fs: FlowSchema): FlowSchema {
  const precedence = fs.spec.matchingPrecedence;
  return {
    ...fs,
    spec: {
      ...fs.spec,
      matchingPrecedence: precedence === undefined || precedence === 0
        ? DEFAULT_MATCHING_PRECEDENCE
        : precedence,
    },
  };
}

/** Queue settings with 0 or absent values replaced by 64 / 8 / 50. */
export function defaultQueuing(q: QueuingConfiguration): Required<QueuingConfiguration> {
  return {
    queues: q.queues || DEFAULT_QUEUES,
    handSize: q.handSize || DEFAULT_HAND_SIZE,
    queueLengthLimit: q.queueLengthLimit || DEFAULT_QUEUE_LENGTH_LIMIT,
  };
}

function defaultLimited(l: LimitedPriorityLevelConfiguration): LimitedPriorityLevelConfiguration {
  const out: LimitedPriorityLevelConfiguration = {
    ...l,
    // v1 keeps an explicit 0 (a "jail" level); only an absent value becomes 30.
    nominalConcurrencyShares: l.nominalConcurrencyShares ?? DEFAULT_NOMINAL_CONCURRENCY_SHARES,
    lendablePercent: l.lendablePercent ?? 0,
    limitResponse: { ...l.limitResponse },
  };
  if (l.limitResponse.queuing !== undefined) {
    out.limitResponse.queuing = defaultQueuing(l.limitResponse.queuing);
  }
  return out;
}

/** The spec with every v1 default applied; `borrowingLimitPercent` stays unset. */
export function defaultPriorityLevelSpec(
  spec: PriorityLevelConfigurationSpec,
): PriorityLevelConfigurationSpec {
  const out: PriorityLevelConfigurationSpec = { ...spec };
  if (spec.limited !== undefined) out.limited = defaultLimited(spec.limited);
  if (spec.exempt !== undefined) {
    out.exempt = {
      ...spec.exempt,
      nominalConcurrencyShares: spec.exempt.nominalConcurrencyShares ?? 0,
      lendablePercent: spec.exempt.lendablePercent ?? 0,
    };
  }
  return out;
}

/** A PriorityLevelConfiguration with every v1 default applied. */
export function defaultPriorityLevel(pl: PriorityLevelConfiguration): PriorityLevelConfiguration {
  return { ...pl, spec: defaultPriorityLevelSpec(pl.spec) };
}
