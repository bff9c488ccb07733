/**
 * Seat budgets on Cloudflare: each level object keeps its level's ledger
 * (`PriorityLevelObject.readLedger`/`writeLedger`, in its storage); a
 * {@linkcode BudgetHolderObject} per region holds a share of every level and
 * decides the requests of that region's Workers on it, settling with the
 * level objects twice per level per period, whatever the request rate. The
 * per-request mode (`cloudflareCoordinator()`) stays for exact fair queuing
 * over every Worker at a round trip to each level's object.
 *
 * @module
 */

import type { Ledger } from "../budgets/ledger.ts";
import type { BudgetStore, StoredLedger } from "../budgets/store.ts";
import type { DurableObjectNamespace } from "./_workers_types.d.ts";
import type { PriorityLevelObject } from "./level_object.ts";
import type { BudgetHolderObject } from "./holder_object.ts";
import type { ControllerObject } from "./controller_object.ts";
import { CallerLiveness } from "./coordinator.ts";
import type { LevelRpc } from "./_worker_client.ts";
import {
  type ControllerRpc,
  WorkerCoordinator,
  type WorkerCoordinatorOptions,
} from "./_worker_coordinator.ts";
import { CONTROLLER_NAME } from "./env.ts";

/** The part of a level object's stub the store calls. */
interface LedgerRpc {
  readLedger(): Promise<StoredLedger | null>;
  writeLedger(expected: string | null, ledger: Ledger): Promise<boolean>;
}

/** A {@linkcode BudgetStore} over the level objects of `levels`: level `L`'s ledger is in object `L`. */
export function levelObjectsBudgetStore(
  levels: DurableObjectNamespace<PriorityLevelObject>,
): BudgetStore {
  const stub = (level: string) => levels.getByName(level) as unknown as LedgerRpc;
  return {
    read: (level) => stub(level).readLedger(),
    write: (level, expected, ledger) => stub(level).writeLedger(expected, ledger),
  };
}

/** Options of {@linkcode cloudflareBudgetCoordinator}. */
export interface BudgetCoordinatorOptions extends WorkerCoordinatorOptions {
  /** The holder object to ask: its name (default `"default"`), one per region. */
  region?: string;
  /** Where to place a holder object made for `region` (a `locationHint` such as `"weur"`). */
  locationHint?: string;
}

/**
 * The coordinator of a Worker on seat budgets: every acquire goes to the
 * {@linkcode BudgetHolderObject} of `options.region`, which decides on its
 * share of each level with no call to the level objects (they keep the
 * ledgers it settles with once per period). Deadlines, the unreachable
 * policy and the configuration (from `controller`) are as with
 * `cloudflareCoordinator()`. Create it once per isolate, lazily from the
 * first request's `env`.
 *
 * @example
 * ```ts ignore
 * import { Hono } from "hono";
 * import { apf } from "@apf/edge/hono";
 * import { type ApfBindings, cloudflareBudgetCoordinator } from "@apf/edge/cloudflare";
 * export { BudgetHolderObject, ControllerObject, PriorityLevelObject } from "@apf/edge/cloudflare";
 *
 * let limiter: ReturnType<typeof apf> | undefined;
 * const app = new Hono<{ Bindings: ApfBindings }>();
 * app.use((c, next) => {
 *   limiter ??= apf({
 *     coordinator: cloudflareBudgetCoordinator(c.env.APF_HOLDERS!, c.env.APF_CONTROLLER, {
 *       region: "eu",
 *       locationHint: "weur",
 *     }),
 *   });
 *   return limiter(c, next);
 * });
 * export default app;
 * ```
 */
export function cloudflareBudgetCoordinator(
  holders: DurableObjectNamespace<BudgetHolderObject>,
  controller: DurableObjectNamespace<ControllerObject> | null,
  options: BudgetCoordinatorOptions = {},
): WorkerCoordinator {
  const { region = "default", locationHint, ...rest } = options;
  const stub = () =>
    holders.getByName(region, locationHint === undefined ? undefined : { locationHint });
  const coordinator = new WorkerCoordinator(
    () => stub() as unknown as LevelRpc,
    controller === null ? null : {
      levelUpdate: () => controller.getByName(CONTROLLER_NAME).levelUpdate(),
    } satisfies ControllerRpc,
    (signal) => new CallerLiveness(signal),
    rest,
  );
  void coordinator.refreshConfiguration();
  return coordinator;
}
