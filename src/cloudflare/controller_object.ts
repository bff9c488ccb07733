/**
 * `ControllerObject`: the one Durable Object (named `controller`) that keeps
 * the APF configuration and runs the borrowing adjustment (`docs/semantics.md` §6) across
 * the level objects: on an alarm every 10 s it collects their seat demand
 * and pushes the current limits. The configuration comes from `APF_CONFIG`
 * (applied again whenever a deploy changes it) or from `setConfiguration`
 * (the admin route); the latest change wins, and it is stored.
 *
 * @module
 */

// @ts-types="./_workers_types.d.ts"
import { DurableObject } from "cloudflare:workers";
import type { BorrowingAdjustment } from "../coordinator/embedded.ts";
import { BORROWING_ADJUSTMENT_PERIOD_MS } from "../coordinator/embedded.ts";
import {
  type ControllerConfigurationInput,
  ControllerHost,
  type StoredConfiguration,
} from "./_controller_host.ts";
import type { LevelUpdate } from "./_level_host.ts";
import type { DurableObjectState } from "./_workers_types.d.ts";
import type { ApfBindings } from "./env.ts";

/** The configuration `env` gives (`APF_CONFIG`, `APF_SERVER_CONCURRENCY`, `APF_MANDATORY_ONLY`). */
export function configurationFromEnv(env: ApfBindings): ControllerConfigurationInput {
  const limit = env.APF_SERVER_CONCURRENCY;
  return {
    ...(env.APF_CONFIG !== undefined && {
      // JSON is YAML: a value from `vars` reads as its own manifest text.
      manifests: typeof env.APF_CONFIG === "string"
        ? env.APF_CONFIG
        : JSON.stringify(env.APF_CONFIG),
    }),
    ...(limit !== undefined && limit !== "" && { serverConcurrencyLimit: Number(limit) }),
    ...(env.APF_MANDATORY_ONLY === "true" && { mandatoryOnly: true }),
  };
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
            collectSeatDemand: () => stub.collectSeatDemand(),
            update: (name, update) => stub.update(name, update),
          };
        },
        store: {
          get: () => ctx.storage.get<StoredConfiguration>("configuration"),
          put: (value) => ctx.storage.put("configuration", value),
        },
        initial,
      });
    const source = configurationFromEnv(env);
    this.#host = host(source);
    const started = ctx.blockConcurrencyWhile(async () => {
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
      const source = configurationFromEnv(env);
      const text = JSON.stringify(source);
      const seen = await ctx.storage.get<string>(ENV_KEY);
      if (seen !== undefined && seen !== text) {
        await this.#host.setConfiguration(source).catch((e: unknown) =>
          console.error(
            `apf: the new APF_CONFIG is invalid, keeping the configuration in force: ${
              e instanceof Error ? e.message : String(e)
            }`,
          )
        );
      }
      if (seen !== text) await ctx.storage.put(ENV_KEY, text);
      if ((await ctx.storage.getAlarm()) === null) {
        await ctx.storage.setAlarm(Date.now() + BORROWING_ADJUSTMENT_PERIOD_MS);
      }
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
    return await this.#host.setConfiguration(source);
  }

  /** Runs the borrowing adjustment now (what the alarm does every 10 s). */
  async adjust(): Promise<BorrowingAdjustment> {
    await this.#ready;
    return await this.#host.adjust();
  }

  /** The last adjustment, or `null` before the first. */
  async lastAdjustment(): Promise<BorrowingAdjustment | null> {
    await this.#ready;
    return this.#host.lastAdjustment;
  }

  /** Adjusts, then sets the next alarm 10 s on. */
  override async alarm(): Promise<void> {
    try {
      await this.adjust();
    } finally {
      await this.ctx.storage.setAlarm(Date.now() + BORROWING_ADJUSTMENT_PERIOD_MS);
    }
  }
}
