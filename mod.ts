/**
 * `@apf/edge`: Kubernetes API Priority and Fairness for edge and serverless
 * HTTP apps. This entry point is the portable core (Web APIs only).
 *
 * @example
 * ```ts
 * import { bootstrapConfiguration, effectiveConfiguration } from "@apf/edge";
 * const eff = effectiveConfiguration(bootstrapConfiguration());
 * console.log(eff.priorityLevels.map((pl) => `${pl.name}: ${pl.currentLimit}`));
 * ```
 *
 * @module
 */

export * from "./src/config/mod.ts";
export * from "./src/classify/mod.ts";
export * from "./src/fairqueuing/mod.ts";
export * from "./src/sim/mod.ts";
export * from "./src/coordinator/mod.ts";
