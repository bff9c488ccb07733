/**
 * The admin source of a Cloudflare deployment: every reading gathers from
 * the level objects at request time, each call bounded on the injected
 * clock (a level object that does not answer is left out, not waited for).
 *
 * @module
 */

import type { Clock } from "../fairqueuing/clock.ts";
import { TIMED_OUT, withTimeout } from "../fairqueuing/timeout.ts";
import { type AdminSource, AdminUnavailable } from "../observe/admin_source.ts";
import { mergeExpositions } from "../observe/merge_expositions.ts";
import type { CoordinatorSnapshot, SessionsSnapshot } from "../observe/types.ts";
import { levelsInMatchingOrder } from "../config/effective.ts";
import type { GradientSnapshot } from "../adaptive/types.ts";
import { exposeAdaptiveLimit } from "../observe/adaptive_metrics.ts";
import { Registry } from "../observe/registry.ts";
import { effectiveFromWire } from "../protocol/wire_configuration.ts";
import { type ApfBindings, CONTROLLER_NAME } from "./env.ts";

/** Options of {@linkcode levelObjectsSource}. */
export interface LevelObjectsSourceOptions<C> {
  /** The bindings, from what comes with the request. */
  env: (context: C) => ApfBindings;
  /** How long each object may take to answer, in ms. */
  timeoutMs: number;
  /** The clock of `timeoutMs`. */
  clock: Clock;
}

const FAIR_FRACTION = "apiserver_flowcontrol_seat_fair_frac";

/** The controller's levels and fair fraction, for every reading. */
interface Levels {
  names: string[];
  /** The ServerCL in force: the learned one, when it is learned. */
  serverConcurrencyLimit: number;
  fairFraction: number;
  /** The learned limit's state, or `null` for a static limit. */
  learned: GradientSnapshot | null;
}

/** The learned limit's metrics (`apf_adaptive_*`), Prometheus text. */
function learnedMetrics(learned: GradientSnapshot): string {
  const registry = new Registry();
  exposeAdaptiveLimit(registry, () => learned);
  return registry.expose();
}

/** An admin source over the controller and level objects of `options.env`. */
export function levelObjectsSource<C>(options: LevelObjectsSourceOptions<C>): AdminSource<C> {
  const { env: envOf, timeoutMs, clock } = options;
  /** The levels in matching order, as the controller's configuration last read says. */
  let order: readonly string[] = [];

  /** One call to an object: its answer, or `undefined` when it failed or took too long. */
  const call = async <T>(rpc: () => PromiseLike<T> | T): Promise<T | undefined> => {
    try {
      const answer = await withTimeout(clock, Promise.resolve().then(rpc), timeoutMs);
      return answer === TIMED_OUT ? undefined : answer;
    } catch {
      return undefined;
    }
  };

  const levelsOf = async (env: ApfBindings): Promise<Levels | AdminUnavailable> => {
    const controller = env.APF_CONTROLLER.getByName(CONTROLLER_NAME);
    const [stored, last, learned] = await Promise.all([
      call(() => controller.configuration()),
      call(() => controller.lastAdjustment()),
      call(() => controller.adaptiveSnapshot()),
    ]);
    if (stored === undefined) {
      return new AdminUnavailable(504, "The controller object did not answer");
    }
    const effective = effectiveFromWire(stored.configuration);
    if (effective !== null) order = levelsInMatchingOrder(effective);
    return {
      names: effective?.priorityLevels.map((pl) => pl.name) ?? [],
      serverConcurrencyLimit: learned?.limit ?? stored.configuration.serverConcurrencyLimit,
      fairFraction: last?.fairFraction ?? 0,
      learned: learned ?? null,
    };
  };

  const metrics = async (context: C): Promise<string | AdminUnavailable> => {
    const env = envOf(context);
    const levels = await levelsOf(env);
    if (levels instanceof AdminUnavailable) return levels;
    const { names, fairFraction } = levels;
    const texts = await Promise.all(
      names.map((name) => call(() => env.APF_LEVELS.getByName(name).metrics())),
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
      ...(levels.learned === null ? [] : [learnedMetrics(levels.learned)]),
    ]);
    return body +
      (missing.length === 0 ? "" : `# level objects that did not answer: ${missing.join(", ")}\n`);
  };

  return {
    metrics: { expose: metrics },

    levelOrder: () => order,

    async adaptiveSnapshot(context): Promise<GradientSnapshot | null> {
      const controller = envOf(context).APF_CONTROLLER.getByName(CONTROLLER_NAME);
      return (await call(() => controller.adaptiveSnapshot())) ?? null;
    },

    async snapshot(snapshotOptions, context): Promise<CoordinatorSnapshot | AdminUnavailable> {
      const env = envOf(context);
      const levels = await levelsOf(env);
      if (levels instanceof AdminUnavailable) return levels;
      const includeRequests = snapshotOptions.includeRequests === true;
      const parts = await Promise.all(
        levels.names.map((name) =>
          call(() => env.APF_LEVELS.getByName(name).snapshot({ includeRequests }))
        ),
      );
      const answered = parts.filter((p): p is CoordinatorSnapshot => p !== undefined);
      const now = clock.now();
      const all = answered.flatMap((p) => p.levels);
      all.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      return {
        nowMs: answered[0]?.nowMs ?? now,
        wallClockMs: answered[0]?.wallClockMs ?? clock.wallNow?.() ?? now,
        serverConcurrencyLimit: levels.serverConcurrencyLimit,
        seatFairFraction: levels.fairFraction,
        levels: all,
      };
    },

    async sessions(query, context): Promise<SessionsSnapshot | AdminUnavailable> {
      const level = query.get("level");
      if (level === null || level === "") return new AdminUnavailable(400, "Missing ?level=NAME");
      const sessions = await call(() => envOf(context).APF_LEVELS.getByName(level).sessions());
      if (sessions === undefined) {
        return new AdminUnavailable(504, `The level object ${level} did not answer`);
      }
      if (sessions === null) {
        return new AdminUnavailable(404, `The level object ${level} has served nobody yet`);
      }
      return sessions;
    },
  };
}
