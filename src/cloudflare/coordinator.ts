/**
 * `cloudflareCoordinator()`: the coordinator interface inside a Worker, for
 * `apf({ coordinator })`. Requests are classified in the Worker's isolate;
 * each acquire goes to the level's {@linkcode PriorityLevelObject} over RPC,
 * bounded by its queue wait limit plus a margin; an object that is
 * overloaded, fails or stalls leads to the policy (`local`, `open` or
 * `closed`), never to a hang. The configuration to classify with comes from
 * the {@linkcode ControllerObject}.
 *
 * @module
 */

// @ts-types="./_workers_types.d.ts"
import { RpcTarget } from "cloudflare:workers";
import type { Liveness } from "./_level_host.ts";
import type { LevelRpc } from "./_worker_client.ts";
import {
  type ControllerRpc,
  WorkerCoordinator,
  type WorkerCoordinatorOptions,
} from "./_worker_coordinator.ts";
import type { DurableObjectNamespace } from "./_workers_types.d.ts";
import type { ControllerObject } from "./controller_object.ts";
import { CONTROLLER_NAME } from "./env.ts";
import type { PriorityLevelObject } from "./level_object.ts";

export type {
  WorkerCoordinator,
  WorkerCoordinatorOptions,
  WorkerCoordinatorStats,
} from "./_worker_coordinator.ts";

/**
 * The caller's pulse, handed to a level object with each acquire: it calls
 * `alive()` while the request waits. Once the Worker's request is over the
 * call fails, and the object drops the request; an aborted signal answers
 * `false`.
 */
export class CallerLiveness extends RpcTarget implements Liveness {
  #signal: AbortSignal | undefined;

  /** A pulse that stops when `signal` aborts. */
  constructor(signal: AbortSignal | undefined) {
    super();
    this.#signal = signal;
  }

  /** True while the caller still wants its seat. */
  alive(): boolean {
    return this.#signal?.aborted !== true;
  }
}

/**
 * The coordinator of a Worker: seats from the level objects of `levels`,
 * configuration from the controller of `controller`. Create it once per
 * isolate (for example lazily from the first request's `env`).
 *
 * @example
 * ```ts ignore
 * import { Hono } from "hono";
 * import { apf } from "@apf/edge/hono";
 * import { type ApfBindings, cloudflareCoordinator } from "@apf/edge/cloudflare";
 * export { ControllerObject, PriorityLevelObject } from "@apf/edge/cloudflare";
 *
 * let limiter: ReturnType<typeof apf> | undefined;
 * const app = new Hono<{ Bindings: ApfBindings }>();
 * app.use((c, next) => {
 *   limiter ??= apf({ coordinator: cloudflareCoordinator(c.env.APF_LEVELS, c.env.APF_CONTROLLER) });
 *   return limiter(c, next);
 * });
 * export default app;
 * ```
 */
export function cloudflareCoordinator(
  levels: DurableObjectNamespace<PriorityLevelObject>,
  controller: DurableObjectNamespace<ControllerObject> | null,
  options: WorkerCoordinatorOptions = {},
): WorkerCoordinator {
  const coordinator = new WorkerCoordinator(
    (level) => levels.getByName(level) as unknown as LevelRpc,
    controller === null ? null : {
      levelUpdate: () => controller.getByName(CONTROLLER_NAME).levelUpdate(),
    } satisfies ControllerRpc,
    (signal) => new CallerLiveness(signal),
    options,
  );
  void coordinator.refreshConfiguration();
  return coordinator;
}
