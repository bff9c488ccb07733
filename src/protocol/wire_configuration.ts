/**
 * The configuration a coordinator hands its clients (`WireConfiguration`),
 * turned into the effective configuration they classify with.
 *
 * @module
 */

import type { EffectiveConfiguration } from "../config/effective.ts";
import { resolveConfiguration } from "../config/resolve.ts";
import type { WireConfiguration } from "./wire.ts";

/**
 * The effective configuration of what a coordinator sent, or `null` when
 * its objects do not validate here (the client keeps what it had).
 *
 * @example
 * ```ts
 * import { effectiveFromWire } from "./mod.ts";
 * effectiveFromWire({ serverConcurrencyLimit: 600, mandatoryOnly: false, objects: [] })?.nominalSum; // 602
 * ```
 */
export function effectiveFromWire(wire: WireConfiguration): EffectiveConfiguration | null {
  try {
    return resolveConfiguration(wire.objects, {
      serverConcurrencyLimit: wire.serverConcurrencyLimit,
      mandatoryOnly: wire.mandatoryOnly,
    });
  } catch {
    return null;
  }
}
