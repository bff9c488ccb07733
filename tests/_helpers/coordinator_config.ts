/** Small hand-made configurations for the coordinator tests. */

import { type EffectiveConfiguration, effectiveConfiguration } from "../../src/config/effective.ts";
import type { PriorityLevelConfiguration, QueuingConfiguration } from "../../src/config/types.ts";

/** Options of a Limited level built by {@linkcode limited}. */
export interface LimitedOptions {
  /** nominalConcurrencyShares (default 1). */
  shares?: number;
  /** lendablePercent (default 0). */
  lendablePercent?: number;
  /** borrowingLimitPercent (default unset: ServerCL). */
  borrowingLimitPercent?: number | undefined;
  /** Queuing parameters, or `null` (default) for a Reject level. */
  queuing?: QueuingConfiguration | null;
}

/** A Limited PriorityLevelConfiguration. */
export function limited(name: string, options: LimitedOptions = {}): PriorityLevelConfiguration {
  const queuing = options.queuing ?? null;
  return {
    apiVersion: "flowcontrol.apiserver.k8s.io/v1",
    kind: "PriorityLevelConfiguration",
    metadata: { name },
    spec: {
      type: "Limited",
      limited: {
        nominalConcurrencyShares: options.shares ?? 1,
        lendablePercent: options.lendablePercent ?? 0,
        ...(options.borrowingLimitPercent !== undefined &&
          { borrowingLimitPercent: options.borrowingLimitPercent }),
        limitResponse: queuing === null ? { type: "Reject" } : { type: "Queue", queuing },
      },
    },
  };
}

/** The `exempt` level with `shares` reserved seats' shares (default 0). */
export function exempt(shares = 0): PriorityLevelConfiguration {
  return {
    apiVersion: "flowcontrol.apiserver.k8s.io/v1",
    kind: "PriorityLevelConfiguration",
    metadata: { name: "exempt" },
    spec: { type: "Exempt", exempt: { nominalConcurrencyShares: shares, lendablePercent: 0 } },
  };
}

/** The effective configuration of `levels` (no FlowSchemas) at `serverConcurrencyLimit`. */
export function configOf(
  serverConcurrencyLimit: number,
  levels: PriorityLevelConfiguration[],
): EffectiveConfiguration {
  return effectiveConfiguration({ flowSchemas: [], priorityLevels: levels }, {
    serverConcurrencyLimit,
  });
}

/** The limit of every limited level of the conformance suite's configuration. */
export const CONFORMANCE_LIMIT = 2;

/** The conformance suite's configuration (see `_conformance.ts`). */
export function conformanceConfiguration(): EffectiveConfiguration {
  return configOf(6, [
    limited("catch-all"),
    limited("queued", { queuing: { queues: 1, handSize: 1, queueLengthLimit: 3 } }),
    limited("sharded", { queuing: { queues: 8, handSize: 2, queueLengthLimit: 3 } }),
  ]);
}
