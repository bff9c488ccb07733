/**
 * The bindings and variables the Cloudflare adapter reads from a Worker's
 * `env` (set in `wrangler.jsonc`).
 *
 * @module
 */

import type { GradientControllerOptions } from "../adaptive/gradient_options.ts";
import type { DurableObjectNamespace } from "./_workers_types.d.ts";
import type { ControllerObject } from "./controller_object.ts";
import type { PriorityLevelObject } from "./level_object.ts";
import type { BudgetHolderObject } from "./holder_object.ts";

/**
 * The Worker bindings the adapter reads from `env`, as `wrangler.jsonc`
 * declares them: its Durable Objects and its variables. Hono's environment
 * with the variables `apf()` sets is `ApfEnv` of `@apf/edge/hono`; an app
 * takes both: `new Hono<{ Bindings: ApfBindings } & ApfEnv>()`.
 */
export interface ApfBindings {
  /** One {@linkcode PriorityLevelObject} per priority level, named by the level. */
  APF_LEVELS: DurableObjectNamespace<PriorityLevelObject>;
  /** The {@linkcode ControllerObject} (one, named `controller`). */
  APF_CONTROLLER: DurableObjectNamespace<ControllerObject>;
  /**
   * With seat budgets: the {@linkcode BudgetHolderObject}s, one per region,
   * named by the region (`cloudflareBudgetCoordinator`).
   */
  APF_HOLDERS?: DurableObjectNamespace<BudgetHolderObject>;
  /**
   * FlowSchema and PriorityLevelConfiguration manifests, merged with the
   * built-in configuration: YAML or JSON text (a secret, or a text var), or
   * a JSON value in `vars` (a `List`, or an object). A new value is applied
   * when the controller starts after a deploy.
   */
  APF_CONFIG?: string | Record<string, unknown> | unknown[];
  /**
   * The server concurrency limit shared by every level (default 600), or
   * `"auto"`: learned from the latency of the seats the level objects hand
   * out (`docs/adaptive.md`). A JSON object in `vars` is `auto` with the
   * learning's options (`{ "min": 4, "max": 200, "sampleWindowMs": 2000 }`).
   */
  APF_SERVER_CONCURRENCY?: string | number | GradientControllerOptions;
  /** With `APF_SERVER_CONCURRENCY=auto`: the lowest learned limit (default 3). */
  APF_SERVER_CONCURRENCY_MIN?: string | number;
  /** With `APF_SERVER_CONCURRENCY=auto`: the highest learned limit (default 1000). */
  APF_SERVER_CONCURRENCY_MAX?: string | number;
  /** With `APF_SERVER_CONCURRENCY=auto`: the limit learning starts from (default 20). */
  APF_SERVER_CONCURRENCY_INITIAL?: string | number;
  /** `"true"`: merge `APF_CONFIG` with the mandatory built-in objects only (not the suggested ones). */
  APF_MANDATORY_ONLY?: string;
  /**
   * The shared secret of WebSocket clients (`connectCoordinator`) and of the
   * admin routes; set it with `wrangler secret put APF_TOKEN`.
   */
  APF_TOKEN?: string;
}

/** The name of the one controller object. */
export const CONTROLLER_NAME = "controller";
