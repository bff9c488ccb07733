/** Helpers of the gateway tests: small configurations, percentiles. */

import {
  type EffectiveConfiguration,
  effectiveConfiguration,
  loadConfiguration,
} from "../../mod.ts";
import { mergeWithBootstrap } from "../../src/config/mod.ts";

/**
 * The mandatory objects plus `manifest`, at `serverConcurrencyLimit`: small
 * levels whose limits are easy to reason about.
 */
export function smallConfig(
  manifest: string,
  serverConcurrencyLimit: number,
): EffectiveConfiguration {
  const user = loadConfiguration({ manifests: [{ name: "test", text: manifest }] });
  const merged = mergeWithBootstrap(user, { mandatoryOnly: true }).configuration;
  return effectiveConfiguration(merged, { serverConcurrencyLimit });
}

/** Percentile `p` (0..1) of `values`, nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? NaN;
}
