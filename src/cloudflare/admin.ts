/**
 * `cloudflareAdminRoutes()`: the metrics and debug dumps of a Cloudflare
 * deployment, gathered from every level object at request time: `GET
 * /metrics` (one Prometheus exposition for all levels), Kubernetes' three
 * `dump_*` routes over all levels, and `dump_sessions?level=NAME` (one
 * level object's WebSocket sessions and reclaimed seats).
 *
 * @module
 */

import { type Context, type Env, Hono } from "hono";
import { effectiveFromWire } from "../protocol/wire_configuration.ts";
import {
  dumpPriorityLevels,
  dumpPriorityLevelsJson,
  dumpQueues,
  dumpQueuesJson,
  dumpRequests,
  dumpRequestsJson,
} from "../observe/dumps.ts";
import { mergeExpositions } from "../observe/merge_expositions.ts";
import { PROMETHEUS_CONTENT_TYPE } from "../observe/registry.ts";
import { dumpSessions, dumpSessionsJson } from "../observe/session_dumps.ts";
import type { CoordinatorSnapshot } from "../observe/types.ts";
import { type ApfBindings, CONTROLLER_NAME } from "./env.ts";

/** Options of {@linkcode cloudflareAdminRoutes}. */
export interface CloudflareAdminOptions<E extends Env> {
  /**
   * Whether the request may see the routes (`true` to allow); a refusal
   * answers 403. Required: for example compare a bearer token with a secret.
   */
  authorize: (c: Context<E>) => boolean | Promise<boolean>;
  /** The bindings (default `c.env`). */
  env?: (c: Context<E>) => ApfBindings;
  /** How long a level object may take to answer, in ms (default 2,000); slower ones are left out. */
  timeoutMs?: number;
}

const FAIR_FRACTION = "apiserver_flowcontrol_seat_fair_frac";
const DEBUG_PREFIX = "/debug/api_priority_and_fairness";

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    promise.catch(() => undefined),
    new Promise<undefined>((resolve) => timer = setTimeout(() => resolve(undefined), ms)),
  ]).finally(() => clearTimeout(timer));
}

/**
 * The admin routes of a Worker using the Cloudflare adapter; mount them
 * with `app.route("/apf", cloudflareAdminRoutes({ authorize }))`.
 *
 * @throws {TypeError} when `options.authorize` is missing.
 * @example
 * ```ts ignore
 * import { Hono } from "hono";
 * import { type ApfBindings, cloudflareAdminRoutes } from "@apf/edge/cloudflare";
 * const app = new Hono<{ Bindings: ApfBindings }>();
 * app.route("/apf", cloudflareAdminRoutes({
 *   authorize: (c) => c.req.header("Authorization") === `Bearer ${c.env.APF_TOKEN}`,
 * }));
 * ```
 */
export function cloudflareAdminRoutes<E extends Env = { Bindings: ApfBindings }>(
  options: CloudflareAdminOptions<E>,
): Hono<E> {
  if (typeof options?.authorize !== "function") {
    throw new TypeError(
      "Cannot create the admin routes: options.authorize must be a function (return true to allow everyone)",
    );
  }
  const envOf = options.env ?? ((c: Context<E>) => c.env as ApfBindings);
  const timeoutMs = options.timeoutMs ?? 2_000;
  const app = new Hono<E>();
  // Per route, not a middleware: mounted at a prefix, a middleware would also guard the
  // app's other routes under it.
  const guarded = (handle: (c: Context<E>) => Promise<Response>) => async (c: Context<E>) =>
    (await options.authorize(c)) === true ? handle(c) : c.text("Forbidden\n", 403);

  /** The levels of the controller's configuration, and its last fair fraction. */
  const levelsOf = async (env: ApfBindings) => {
    const controller = env.APF_CONTROLLER.getByName(CONTROLLER_NAME);
    const [stored, last] = await Promise.all([
      controller.configuration(),
      controller.lastAdjustment(),
    ]);
    const effective = effectiveFromWire(stored.configuration);
    return {
      names: effective?.priorityLevels.map((pl) => pl.name) ?? [],
      serverConcurrencyLimit: stored.configuration.serverConcurrencyLimit,
      fairFraction: last?.fairFraction ?? 0,
    };
  };

  app.get(
    "/metrics",
    guarded(async (c) => {
      const env = envOf(c);
      const { names, fairFraction } = await levelsOf(env);
      const texts = await Promise.all(
        names.map((name) => withTimeout(env.APF_LEVELS.getByName(name).metrics(), timeoutMs)),
      );
      // Each object's fair fraction is its own (0); the controller's is the one that counts.
      const strip = (text: string) =>
        text.split("\n").filter((l) => !l.includes(FAIR_FRACTION)).join("\n");
      const controller = `# HELP ${FAIR_FRACTION} [ALPHA] Fair fraction of server's concurrency ` +
        `to allocate to each priority level that can use it\n# TYPE ${FAIR_FRACTION} gauge\n` +
        `${FAIR_FRACTION} ${fairFraction}\n`;
      const missing = names.filter((_, i) => texts[i] === undefined);
      const body = mergeExpositions([
        ...texts.flatMap((t) => t === undefined ? [] : [strip(t)]),
        controller,
      ]);
      return c.body(
        body +
          (missing.length === 0
            ? ""
            : `# level objects that did not answer: ${missing.join(", ")}\n`),
        200,
        { "Content-Type": PROMETHEUS_CONTENT_TYPE },
      );
    }),
  );

  const snapshotOf = async (
    env: ApfBindings,
    includeRequests: boolean,
  ): Promise<CoordinatorSnapshot> => {
    const { names, serverConcurrencyLimit, fairFraction } = await levelsOf(env);
    const parts = await Promise.all(
      names.map((name) =>
        withTimeout(env.APF_LEVELS.getByName(name).snapshot({ includeRequests }), timeoutMs)
      ),
    );
    const answered = parts.filter((p): p is CoordinatorSnapshot => p !== undefined);
    const now = Date.now();
    const levels = answered.flatMap((p) => p.levels);
    levels.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return {
      nowMs: answered[0]?.nowMs ?? now,
      wallClockMs: answered[0]?.wallClockMs ?? now,
      serverConcurrencyLimit,
      seatFairFraction: fairFraction,
      levels,
    };
  };

  app.get(
    `${DEBUG_PREFIX}/dump_priority_levels`,
    guarded(async (c) => {
      const s = await snapshotOf(envOf(c), false);
      return c.req.query("format") === "json"
        ? c.json(dumpPriorityLevelsJson(s))
        : c.text(dumpPriorityLevels(s));
    }),
  );
  app.get(
    `${DEBUG_PREFIX}/dump_queues`,
    guarded(async (c) => {
      const s = await snapshotOf(envOf(c), false);
      return c.req.query("format") === "json" ? c.json(dumpQueuesJson(s)) : c.text(dumpQueues(s));
    }),
  );
  app.get(
    `${DEBUG_PREFIX}/dump_requests`,
    guarded(async (c) => {
      const s = await snapshotOf(envOf(c), true);
      const includeRequestDetails = (c.req.query("includeRequestDetails") ?? "") !== "";
      return c.req.query("format") === "json"
        ? c.json(dumpRequestsJson(s, { includeRequestDetails }))
        : c.text(dumpRequests(s, { includeRequestDetails }));
    }),
  );
  app.get(
    `${DEBUG_PREFIX}/dump_sessions`,
    guarded(async (c) => {
      const level = c.req.query("level");
      if (level === undefined || level === "") return c.text("Missing ?level=NAME\n", 400);
      const sessions = await withTimeout(
        envOf(c).APF_LEVELS.getByName(level).sessions(),
        timeoutMs,
      );
      if (sessions === undefined) return c.text(`The level object ${level} did not answer\n`, 504);
      if (sessions === null) {
        return c.text(`The level object ${level} has served nobody yet\n`, 404);
      }
      return c.req.query("format") === "json"
        ? c.json(dumpSessionsJson(sessions))
        : c.text(dumpSessions(sessions));
    }),
  );
  return app;
}
