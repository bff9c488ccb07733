/**
 * The effective configuration: what a server does with a set of objects
 * (`docs/semantics.md` §2.4, §2.6): the priority levels with their limits and their current
 * limits at zero demand, and the FlowSchemas in matching order with dangling
 * ones set aside.
 *
 * @module
 */

import { mandatoryFlowSchemas, mandatoryPriorityLevels } from "./bootstrap.ts";
import { allocateCurrentLimits } from "./borrowing.ts";
import { CATCH_ALL, DEFAULT_SERVER_CONCURRENCY_LIMIT, EXEMPT } from "./constants.ts";
import {
  DEFAULT_MATCHING_PRECEDENCE,
  defaultFlowSchema,
  defaultPriorityLevel,
  defaultQueuing,
} from "./defaults.ts";
import { computeLevelLimits, type LevelLimits } from "./limits.ts";
import type {
  FlowControlConfiguration,
  FlowDistinguisherMethodType,
  FlowSchema,
  LimitResponseType,
  PriorityLevelConfiguration,
  PriorityLevelType,
  QueuingConfiguration,
} from "./types.ts";
import { objectUid } from "./uid.ts";

/** A priority level with its computed limits. */
export interface EffectivePriorityLevel extends LevelLimits {
  /** The level's name. */
  name: string;
  /** The object's `metadata.uid`, or one derived from its name (see {@linkcode objectUid}). */
  uid: string;
  /** `Exempt` or `Limited`. */
  type: PriorityLevelType;
  /** For Limited levels: `Queue` or `Reject`. */
  limitResponse?: LimitResponseType;
  /** Current concurrency limit after the first borrowing allocation, with zero demand. */
  currentLimit: number;
  /** Queuing parameters, defaults applied (queuing levels only). */
  queuing?: Required<QueuingConfiguration>;
  /** The object itself. */
  object: PriorityLevelConfiguration;
  /**
   * True for a mandatory level (`exempt`, `catch-all`) the configuration
   * lacked, supplied with its built-in spec. A coordinator that already
   * holds the level keeps it as it was instead (Kubernetes retains a
   * mandatory level whose object went away).
   */
  imagined?: boolean;
}

/** A FlowSchema in matching order. */
export interface EffectiveFlowSchema {
  /** The schema's name. */
  name: string;
  /** The object's `metadata.uid`, or one derived from its name (see {@linkcode objectUid}). */
  uid: string;
  /** Its matching precedence. */
  precedence: number;
  /** The level it assigns requests to. */
  priorityLevel: string;
  /** How it tells flows apart; absent: one flow. */
  distinguisher?: FlowDistinguisherMethodType;
  /** The object itself. */
  object: FlowSchema;
}

/** Everything a server derives from a configuration. */
export interface EffectiveConfiguration {
  /** The server concurrency limit the levels share. */
  serverConcurrencyLimit: number;
  /** Σ shares of all levels. */
  shareSum: number;
  /** Σ NominalCL of all levels (can exceed the server limit: NominalCL rounds up). */
  nominalSum: number;
  /** Priority levels: the given ones, then any imagined mandatory level. */
  priorityLevels: EffectivePriorityLevel[];
  /** FlowSchemas that match requests, in matching order. */
  flowSchemas: EffectiveFlowSchema[];
  /** FlowSchemas that reference a missing level; they match nothing. */
  dangling: EffectiveFlowSchema[];
}

/** Options of {@linkcode effectiveConfiguration}. */
export interface EffectiveOptions {
  /** Seats the whole server may run at once (default 600). */
  serverConcurrencyLimit?: number;
}

/** Matching order: precedence ascending, then name (byte-wise; names are ASCII). */
export function compareFlowSchemas(a: FlowSchema, b: FlowSchema): number {
  const pa = a.spec.matchingPrecedence ?? DEFAULT_MATCHING_PRECEDENCE;
  const pb = b.spec.matchingPrecedence ?? DEFAULT_MATCHING_PRECEDENCE;
  if (pa !== pb) return pa - pb;
  const na = a.metadata.name, nb = b.metadata.name;
  return na < nb ? -1 : na > nb ? 1 : 0;
}

function describeFlowSchema(fs: FlowSchema): EffectiveFlowSchema {
  const out: EffectiveFlowSchema = {
    name: fs.metadata.name,
    uid: fs.metadata.uid || objectUid("FlowSchema", fs.metadata.name),
    precedence: fs.spec.matchingPrecedence ?? DEFAULT_MATCHING_PRECEDENCE,
    priorityLevel: fs.spec.priorityLevelConfiguration.name,
    object: fs,
  };
  if (fs.spec.distinguisherMethod !== undefined) {
    out.distinguisher = fs.spec.distinguisherMethod.type;
  }
  return out;
}

/**
 * Derives the effective configuration of validated objects. Missing mandatory
 * levels and schemas are imagined, as every server does: a missing `exempt`
 * schema goes first and a missing `catch-all` schema last. A schema whose
 * level is not among the given objects is dangling, even when that level is
 * an imagined mandatory one.
 *
 * @example
 * ```ts
 * import { bootstrapConfiguration, effectiveConfiguration } from "@apf/edge";
 * const eff = effectiveConfiguration(bootstrapConfiguration());
 * eff.nominalSum; // 602
 * ```
 */
export function effectiveConfiguration(
  config: FlowControlConfiguration,
  options: EffectiveOptions = {},
): EffectiveConfiguration {
  const serverCL = options.serverConcurrencyLimit ?? DEFAULT_SERVER_CONCURRENCY_LIMIT;
  const levels = config.priorityLevels.map(defaultPriorityLevel);
  const given = levels.length;
  for (const m of mandatoryPriorityLevels()) {
    if (!levels.some((pl) => pl.metadata.name === m.metadata.name)) {
      levels.push(defaultPriorityLevel(m));
    }
  }
  const { priorityLevels, shareSum, nominalSum } = levelsAt(levels, serverCL);
  for (let i = given; i < priorityLevels.length; i++) priorityLevels[i]!.imagined = true;

  // A schema's level must be one of the given objects: an imagined level does not count, since
  // Kubernetes digests the schemas before it imagines the missing mandatory levels
  // (`digestConfigObjects` in apf_controller.go).
  const levelNames = new Set(config.priorityLevels.map((pl) => pl.metadata.name));
  const schemas = config.flowSchemas.map(defaultFlowSchema);
  const dangling = schemas.filter((fs) => !levelNames.has(fs.spec.priorityLevelConfiguration.name));
  const usable = schemas.filter((fs) => levelNames.has(fs.spec.priorityLevelConfiguration.name))
    .sort(compareFlowSchemas);
  const [fixedExempt, fixedCatchAll] = mandatoryFlowSchemas().map(defaultFlowSchema);
  if (!usable.some((fs) => fs.metadata.name === EXEMPT)) usable.unshift(fixedExempt!);
  if (!usable.some((fs) => fs.metadata.name === CATCH_ALL)) usable.push(fixedCatchAll!);

  return {
    serverConcurrencyLimit: serverCL,
    shareSum,
    nominalSum,
    priorityLevels,
    flowSchemas: usable.map(describeFlowSchema),
    dangling: dangling.map(describeFlowSchema),
  };
}

/**
 * The same configuration at another server concurrency limit: every level's
 * NominalCL, LendableCL, BorrowingCL and initial current limit recomputed
 * (`docs/semantics.md` §2.6), the FlowSchemas as they are. A learned limit
 * (`src/adaptive/`) reaches the levels through this, as a new ServerCL
 * would.
 *
 * @throws {RangeError} when `serverConcurrencyLimit` is not a positive integer ({TypeError}: not a number).
 * @example
 * ```ts
 * import { bootstrapConfiguration, effectiveConfiguration } from "@apf/edge";
 * import { withServerConcurrencyLimit } from "./effective.ts";
 * const eff = withServerConcurrencyLimit(effectiveConfiguration(bootstrapConfiguration()), 60);
 * eff.serverConcurrencyLimit; // 60
 * ```
 */
export function withServerConcurrencyLimit(
  configuration: EffectiveConfiguration,
  serverConcurrencyLimit: number,
): EffectiveConfiguration {
  const levels = levelsAt(
    configuration.priorityLevels.map((pl) => pl.object),
    serverConcurrencyLimit,
  );
  configuration.priorityLevels.forEach((pl, i) => {
    if (pl.imagined === true) levels.priorityLevels[i]!.imagined = true;
  });
  return { ...configuration, serverConcurrencyLimit, ...levels };
}

/** The levels (defaults applied) with their limits at `serverCL`, and the sums of shares and NominalCL. */
function levelsAt(
  levels: readonly PriorityLevelConfiguration[],
  serverCL: number,
): Pick<EffectiveConfiguration, "priorityLevels" | "shareSum" | "nominalSum"> {
  const limits = computeLevelLimits(levels, serverCL);
  const nominalSum = limits.reduce((sum, l) => sum + l.nominal, 0);
  const { currentLimits } = allocateCurrentLimits(
    levels.map((pl, i) => {
      const l = limits[i]!;
      return {
        exempt: pl.spec.type === "Exempt",
        nominal: l.nominal,
        min: l.min,
        max: l.max,
        highWatermark: 0,
        smoothed: 0,
        current: l.initialCurrent,
      };
    }),
    nominalSum,
  );
  const priorityLevels = levels.map((pl, i): EffectivePriorityLevel => {
    const out: EffectivePriorityLevel = {
      name: pl.metadata.name,
      uid: pl.metadata.uid || objectUid("PriorityLevelConfiguration", pl.metadata.name),
      type: pl.spec.type,
      ...limits[i]!,
      currentLimit: currentLimits[i]!,
      object: pl,
    };
    const response = pl.spec.limited?.limitResponse;
    if (pl.spec.type === "Limited" && response !== undefined) {
      out.limitResponse = response.type;
      if (response.queuing !== undefined) out.queuing = defaultQueuing(response.queuing);
    }
    return out;
  });

  return {
    priorityLevels,
    shareSum: limits.reduce((sum, l) => sum + l.shares, 0),
    nominalSum,
  };
}

/**
 * The priority levels' names in the order requests are matched to them: the
 * level of the first FlowSchema in matching order first, each once, then the
 * levels no FlowSchema reaches, in configuration order.
 */
export function levelsInMatchingOrder(configuration: EffectiveConfiguration): string[] {
  const order = new Set(configuration.flowSchemas.map((fs) => fs.priorityLevel));
  for (const pl of configuration.priorityLevels) order.add(pl.name);
  return [...order];
}
