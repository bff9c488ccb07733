/**
 * An `apf serve` process of any checkout with its admin routes on, for the
 * black-box tests that stop, resume and inspect gateways: started with the
 * permissions given (the tests give the `apf` task's), its output kept as it
 * comes, its `dump_priority_levels` at hand.
 */

import { systemClock } from "../../src/fairqueuing/clock.ts";
import { type ApfProcess, readUntil, spawnApf, stopApf } from "./cli.ts";
import { within } from "./real_time.ts";

/** What {@linkcode startGateway} runs. */
export interface GatewayOptions {
  /** Its name in messages. */
  name: string;
  /** `apf serve` arguments (the listen and admin addresses are added). */
  args: readonly string[];
  /** Deno permission flags. */
  permissions: readonly string[];
  /** The checkout to run `apf` from (default: this one). */
  root?: string;
  /** Environment variables besides `NO_COLOR=1`. */
  env?: Record<string, string>;
  /** How long it may take to listen, in ms (default 30,000). */
  readyMs?: number;
}

/** A running `apf serve`. */
export interface Gateway extends AsyncDisposable {
  readonly name: string;
  /** `http://127.0.0.1:PORT`, and its admin routes'. */
  readonly url: string;
  readonly adminUrl: string;
  /** Standard output so far. */
  readonly stdout: string;
  /** SIGSTOP; SIGCONT. */
  freeze(): void;
  thaw(): void;
  /** `dump_priority_levels` (JSON), the row of `level`, or what went wrong. */
  dumpLevel(level: string): Promise<Record<string, unknown> | string>;
  /** SIGCONT, SIGTERM (SIGKILL 5 s on); its exit code and standard error. */
  stop(): Promise<{ code: number; stderr: string }>;
}

/**
 * Starts `apf serve` on 127.0.0.1 (free ports, admin routes on) and waits
 * until it listens.
 *
 * @throws {Error} with its output when it exits or does not listen in time (it is killed).
 */
export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const p: ApfProcess = spawnApf(
    ["serve", ...options.args, "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"],
    {
      permissions: options.permissions,
      ...(options.env !== undefined && { env: options.env }),
      ...(options.root !== undefined && { root: options.root }),
    },
  );
  const signal = (name: Deno.Signal) => {
    try {
      p.child.kill(name);
    } catch {
      // it exited
    }
  };
  let url: string, adminUrl: string;
  try {
    const listening = /listening on (http:\/\/127\.0\.0\.1:\d+)/;
    const admin = /admin routes on (http:\/\/127\.0\.0\.1:\d+)/;
    const reading = (async (): Promise<[string, string]> => [
      (await readUntil(p.stdout, listening, p.seen))[1]!,
      (await readUntil(p.stdout, admin, p.seen))[1]!,
    ])();
    reading.catch(() => {}); // when it is too late, killing it ends the read
    [url, adminUrl] = await within(reading, options.readyMs ?? 30_000, `${options.name} listening`);
  } catch (e) {
    await p[Symbol.asyncDispose]();
    throw new Error(`gateway ${options.name}: ${(e as Error).message}\n${await p.stderr}`);
  }
  // Read on, or a full pipe would block it.
  const drained = (async () => {
    try {
      for (;;) {
        const { done, value } = await p.stdout.read();
        if (done) return;
        p.seen.text += value;
      }
    } catch {
      // cancelled
    }
  })();
  let stopping: Promise<{ code: number; stderr: string }> | undefined;
  const stop = () =>
    stopping ??= (async () => {
      signal("SIGCONT");
      const late = systemClock.setTimer(5_000, () => signal("SIGKILL"));
      try {
        const code = await stopApf(p);
        await drained;
        return { code, stderr: await p.stderr };
      } finally {
        late.cancel();
      }
    })();
  return {
    name: options.name,
    url,
    adminUrl,
    get stdout() {
      return p.seen.text;
    },
    freeze: () => signal("SIGSTOP"),
    thaw: () => signal("SIGCONT"),
    async dumpLevel(level) {
      try {
        const res = await fetch(
          `${adminUrl}/debug/api_priority_and_fairness/dump_priority_levels?format=json`,
          { signal: AbortSignal.timeout(2_000) },
        );
        const rows = await res.json() as Record<string, unknown>[];
        return rows.find((r) => r.priorityLevelName === level) ?? `no level ${level}`;
      } catch (e) {
        return `dump_priority_levels: ${(e as Error).message}`;
      }
    },
    stop,
    [Symbol.asyncDispose]: async () => void await stop(),
  };
}
