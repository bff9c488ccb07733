/**
 * The configuration a coordinator hands its clients (`WireConfiguration`),
 * turned into the effective configuration they classify with.
 *
 * @module
 */

import { type EffectiveConfiguration, effectiveConfiguration } from "../config/effective.ts";
import { parseConfiguration } from "../config/load.ts";
import { mergeWithBootstrap } from "../config/merge.ts";
import type { WireConfiguration } from "./wire.ts";

/**
 * The effective configuration of what a coordinator sent, or `null` when
 * its objects do not validate here (the client keeps what it had).
 *
 * @example
 * ```ts
 * import { effectiveFromWire } from "@apf/edge";
 * effectiveFromWire({ serverConcurrencyLimit: 600, mandatoryOnly: false, objects: [] })?.nominalSum; // 602
 * ```
 */
export function effectiveFromWire(wire: WireConfiguration): EffectiveConfiguration | null {
  const parsed = parseConfiguration({ objects: wire.objects });
  if (!parsed.ok) return null;
  const merged = mergeWithBootstrap(parsed.configuration, { mandatoryOnly: wire.mandatoryOnly });
  try {
    return effectiveConfiguration(merged.configuration, {
      serverConcurrencyLimit: wire.serverConcurrencyLimit,
    });
  } catch {
    return null;
  }
}
