/**
 * `ControllerObject`: the one Durable Object (named `controller`) that keeps
 * the APF configuration and runs the borrowing adjustment (`docs/semantics.md` §6) across
 * the level objects: on an alarm every 10 s it collects their seat demand
 * and pushes the current limits. The configuration comes from `APF_CONFIG`
 * (applied again whenever a deploy changes it) or from `setConfiguration`
 * (the admin route); the latest change wins, and it is stored.
 *
 * With `APF_SERVER_CONCURRENCY=auto` (or `serverConcurrencyLimit: "auto"`
 * through `setConfiguration`) it also learns the server concurrency limit
 * from the latency of the seats the level objects hand out
 * (`docs/adaptive.md`): the alarm then comes every sample window (1 s), and
 * each brings the levels' samples. The learning lives in memory: an object
 * that restarts learns again from the initial limit.
 *
 * @module
 */

// @ts-types="./_workers_types.d.ts"
import { DurableObject } from "cloudflare:workers";
import type { BorrowingAdjustment } from "../coordinator/embedded.ts";
import type { GradientSnapshot } from "../adaptive/types.ts";
import {
  configurationFromEnv,
  type ControllerConfigurationInput,
  type StoredConfiguration,
} from "./_controller_configuration.ts";
import { ControllerHost } from "./_controller_host.ts";
import type { LevelUpdate } from "./_level_host.ts";
import type { DurableObjectState } from "./_workers_types.d.ts";
import type { ApfBindings } from "./env.ts";

/** The configuration `env` gives, or what is wrong with it. */
function readEnv(env: ApfBindings): ControllerConfigurationInput | TypeError {
  try {
    return configurationFromEnv(env);
  } catch (e) {
    return e instanceof TypeError ? e : new TypeError(String(e));
  }
}

const ENV_KEY = "env-configuration";

/** The controller of a Cloudflare deployment. */
export class ControllerObject extends DurableObject<ApfBindings> {
  #host: ControllerHost;
  #ready: Promise<void>;

  /** Created by the runtime. */
  constructor(ctx: DurableObjectState, env: ApfBindings) {
    super(ctx, env);
    const host = (initial: ControllerConfigurationInput) =>
      new ControllerHost({
        levels: (level) => {
          const stub = env.APF_LEVELS.getByName(level);
          return {
            collect: () => stub.collect(),
            update: (name, update) => stub.update(name, update),
          };
        },
        store: {
          get: () => ctx.storage.get<StoredConfiguration>("configuration"),
          put: (value) => ctx.storage.put("configuration", value),
        },
        initial,
      });
    const read = readEnv(env);
    const source = read instanceof TypeError ? {} : read;
    this.#host = host(source);
    const started = ctx.blockConcurrencyWhile(async () => {
      if (read instanceof TypeError) {
        console.error(
          `apf: the configuration from env is invalid, serving the built-in one: ${read.message}`,
        );
      }
      // Requests must keep flowing: without a valid APF_CONFIG (and nothing stored), serve the
      // built-in configuration with the deployment's other settings, else the bare built-in one.
      const { manifests: _, ...settings } = source;
      for (const fallback of [settings, {}]) {
        try {
          await this.#host.start();
          return;
        } catch (e) {
          console.error(
            `apf: the configuration from env is invalid, serving the built-in one: ${
              e instanceof Error ? e.message : String(e)
            }`,
          );
          this.#host = host(fallback);
        }
      }
      await this.#host.start();
    });
    // A deploy that changed APF_CONFIG wins over what was stored; level objects hear it.
    this.#ready = started.then(async () => {
      const text = JSON.stringify(read instanceof TypeError ? { error: read.message } : read);
      const seen = await ctx.storage.get<string>(ENV_KEY);
      if (seen !== undefined && seen !== text) {
        const applied = read instanceof TypeError
          ? Promise.reject(read)
          : this.#host.setConfiguration(read);
        await applied.catch((e: unknown) =>
          console.error(
            `apf: the new APF_CONFIG is invalid, keeping the configuration in force: ${
              e instanceof Error ? e.message : String(e)
            }`,
          )
        );
      }
      if (seen !== text) await ctx.storage.put(ENV_KEY, text);
      await this.#armAlarm();
    });
  }

  /** What a level object gets when it starts: the configuration and current limits. */
  async levelUpdate(): Promise<LevelUpdate> {
    await this.#ready;
    return this.#host.levelUpdate();
  }

  /** The configuration in force and its version. */
  async configuration(): Promise<StoredConfiguration> {
    await this.#ready;
    return this.#host.configuration;
  }

  /**
   * Replaces the configuration, refused whole when invalid (the error lists
   * every problem), stores it and pushes it to every level object.
   */
  async setConfiguration(source: ControllerConfigurationInput): Promise<StoredConfiguration> {
    await this.#ready;
    const stored = await this.#host.setConfiguration(source);
    // A learned limit adjusts every sample window: the next alarm may be due sooner.
    await this.#armAlarm();
    return stored;
  }

  /**
   * The learned server concurrency limit's state (`"auto"`), or `null` for
   * a static limit.
   */
  async adaptiveSnapshot(): Promise<GradientSnapshot | null> {
    await this.#ready;
    return this.#host.adaptiveSnapshot();
  }

  /** Runs the borrowing adjustment now (what the alarm does every 10 s, or every sample window). */
  async adjust(): Promise<BorrowingAdjustment> {
    await this.#ready;
    return await this.#host.adjust();
  }

  /** The last adjustment, or `null` before the first. */
  async lastAdjustment(): Promise<BorrowingAdjustment | null> {
    await this.#ready;
    return this.#host.lastAdjustment;
  }

  /** Adjusts, then sets the next alarm 10 s (with a learned limit: a sample window) on. */
  override async alarm(): Promise<void> {
    try {
      await this.adjust();
    } finally {
      await this.ctx.storage.setAlarm(Date.now() + this.#host.adjustmentPeriodMs);
    }
  }

  /** An alarm within the adjustment period from now (an earlier one stays). */
  async #armAlarm(): Promise<void> {
    const at = Date.now() + this.#host.adjustmentPeriodMs;
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > at) await this.ctx.storage.setAlarm(at);
  }
}
