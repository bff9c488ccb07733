/**
 * A real `redis-server` (the Debian package `redis-server`) on a free
 * loopback port, started and stopped by a test, without persistence. Where
 * it is not installed, `REDIS_MISSING` is true and the tests that need it
 * are ignored.
 */

import assert from "node:assert/strict";
import { systemClock } from "../../mod.ts";
import { sleep } from "./real_time.ts";

function installed(): boolean {
  try {
    return new Deno.Command("redis-server", { args: ["--version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

/**
 * True where `redis-server` is not installed: the Redis tests are then
 * ignored, and `redis_budget_store_test.ts` says so, once for the folder
 * (Deno evaluates this module once per test file).
 */
export const REDIS_MISSING: boolean = !installed();

const fixture = (name: string) =>
  Deno.readTextFileSync(new URL(`../fixtures/tls/${name}`, import.meta.url));

/** The test CA that signed the fixture certificate for 127.0.0.1 (`tests/fixtures/tls/`). */
export const TEST_CA: string = fixture("test_only_ca.pem");

/** What to start the server with. */
export interface RedisServerOptions {
  /** The password of the default user (`--requirepass`). */
  password?: string;
  /** TLS only, with the fixture certificate for 127.0.0.1. */
  tls?: boolean;
}

/** A running redis-server. */
export interface RedisServer {
  /** Its port on 127.0.0.1. */
  readonly port: number;
  /** `redis://127.0.0.1:port` (or `rediss://`), without a password. */
  readonly url: string;
  /** Stops it (its data is gone: no persistence). */
  stop(): Promise<void>;
  /** Starts it again on the same port. */
  restart(): Promise<void>;
  /** Freezes it (SIGSTOP): it accepts connections but answers nothing. */
  pause(): void;
  /** Thaws it (SIGCONT). */
  resume(): void;
}

/** Runs `redis-cli` on `server` with `args`; resolves its output, trimmed. */
export async function redisCli(server: RedisServer, ...args: string[]): Promise<string> {
  const output = await new Deno.Command("redis-cli", {
    args: ["-h", "127.0.0.1", "-p", String(server.port), ...args],
    stdin: "null",
  }).output();
  const text = new TextDecoder().decode(output.stdout).trim();
  assert.ok(
    output.success,
    `redis-cli ${args.join(" ")}: ${new TextDecoder().decode(output.stderr)}`,
  );
  return text;
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

async function accepting(port: number): Promise<boolean> {
  try {
    (await Deno.connect({ hostname: "127.0.0.1", port })).close();
    return true;
  } catch {
    return false;
  }
}

/** Starts a redis-server on a free port of 127.0.0.1; stop it at the end of the test. */
export async function startRedis(options: RedisServerOptions = {}): Promise<RedisServer> {
  const port = freePort();
  const certs = new URL("../fixtures/tls/", import.meta.url).pathname;
  const args = [
    "--bind",
    "127.0.0.1",
    ...(options.tls
      ? [
        "--port",
        "0",
        "--tls-port",
        String(port),
        "--tls-cert-file",
        `${certs}test_only_127.0.0.1.pem`,
        "--tls-key-file",
        `${certs}test_only_127.0.0.1.key.pem`,
        "--tls-ca-cert-file",
        `${certs}test_only_ca.pem`,
        "--tls-auth-clients",
        "no",
      ]
      : ["--port", String(port)]),
    "--save",
    "",
    "--appendonly",
    "no",
    "--loglevel",
    "warning",
    ...(options.password === undefined ? [] : ["--requirepass", options.password]),
  ];
  let child: Deno.ChildProcess | null = null;
  const start = async () => {
    const running = new Deno.Command("redis-server", {
      args,
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    child = running;
    const until = systemClock.now() + 5_000;
    while (!await accepting(port)) {
      const status = await Promise.race([running.status, sleep(20).then(() => null)]);
      if (status !== null) {
        const stderr = new TextDecoder().decode((await running.stderr.getReader().read()).value);
        assert.fail(`redis-server exited (${status.code}) on port ${port}: ${stderr}`);
      }
      assert.ok(
        systemClock.now() < until,
        `redis-server did not listen on port ${port} within 5 s`,
      );
    }
  };
  const stop = async () => {
    const running: Deno.ChildProcess | null = child;
    if (running === null) return;
    child = null;
    running.kill("SIGCONT");
    running.kill("SIGKILL");
    await running.status;
    await running.stderr.cancel();
  };
  await start();
  return {
    port,
    url: `${options.tls ? "rediss" : "redis"}://127.0.0.1:${port}`,
    stop,
    async restart() {
      await stop();
      await start();
    },
    pause() {
      (child as Deno.ChildProcess | null)?.kill("SIGSTOP");
    },
    resume() {
      (child as Deno.ChildProcess | null)?.kill("SIGCONT");
    },
  };
}
