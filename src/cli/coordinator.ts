/**
 * `apf coordinator`: the remote coordinator server, until SIGINT or
 * SIGTERM; SIGHUP reloads the configuration files (refused whole when
 * invalid).
 *
 * @module
 */

import {
  ADAPTIVE_FLAGS,
  ADAPTIVE_FLAGS_HELP,
  ADAPTIVE_FLAGS_USAGE,
  adaptiveFlags,
  adaptiveText,
} from "./_adaptive_flags.ts";
import { formatConfigurationDiff } from "../config/diff.ts";
import { parseConfiguration } from "../config/mod.ts";
import type { FlowControlConfiguration } from "../config/types.ts";
import { serveCoordinator } from "../deno/coordinator_server.ts";
import { DASHBOARD_PATH, DEBUG_PREFIX } from "../observe/admin_router.ts";
import { addressOption, type HostPort, httpUrlOf, withFlagNames } from "./_address.ts";
import {
  CONNECTION_FLAGS,
  CONNECTION_FLAGS_HELP,
  CONNECTION_FLAGS_USAGE,
  connectionLimitsOf,
} from "./_connection_flags.ts";
import { parseDurationMs } from "../_shared/duration.ts";
import { helpText, parseArgs } from "./args.ts";
import { type CliIO, type ExitCode, tolerantStdout } from "./io.ts";
import { readManifests } from "./read_manifests.ts";
import { processSignals, type ShutdownSignals } from "./serve.ts";

/** Usage line of the command. */
export const COORDINATOR_USAGE =
  `apf coordinator [--listen 127.0.0.1:7070] [--config <file>...] [--mandatory-only] ${ADAPTIVE_FLAGS_USAGE} [--token-file F] [--admin-listen ADDR] [--allow-empty-config] [--hello-timeout <duration>] ${CONNECTION_FLAGS_USAGE}`;

const HELP = helpText(
  COORDINATOR_USAGE,
  `
Runs the remote coordinator: one process holding every priority level's seats
for any number of apf() middlewares and apf serve gateways, which connect with
a WebSocket (protocol: src/protocol/PROTOCOL.md).

  --listen <host:port>       where clients connect (default 127.0.0.1:7070)
  --config <file>            manifests merged with the built-in configuration (repeatable)
  --mandatory-only           merge with the mandatory built-in objects only
${ADAPTIVE_FLAGS_HELP}
                             (auto here: learned from how long clients hold their seats)
  --token-file F             the shared secret clients must present; without it the
                             coordinator listens on loopback only
  --admin-listen <host:port> serve /metrics, ${DEBUG_PREFIX}/dump_*, the live dashboard
                             (${DEBUG_PREFIX}/) and POST /reload there
  --allow-empty-config       let a reload drop every user object (refused otherwise)
  --hello-timeout <d>        Go duration (default 10s): a client that has not sent hello by
                             then after its WebSocket opened is disconnected
${CONNECTION_FLAGS_HELP}

SIGHUP reloads the configuration files (an invalid one is refused whole and the
old one keeps serving; so is one without any object, replacing one with some,
unless --allow-empty-config). Every reload, by SIGHUP or POST /reload, is
logged with what it changed or why it was refused. SIGINT or SIGTERM answers waiting requests unavailable,
closes every connection and exits 0.
`,
);

/** Subscribes to SIGHUP; returns the unsubscribe function. */
export type ReloadSignal = (onSignal: () => void) => () => void;

const hangup: ReloadSignal = (onSignal) => {
  if (Deno.build.os === "windows") return () => {};
  Deno.addSignalListener("SIGHUP", onSignal);
  return () => Deno.removeSignalListener("SIGHUP", onSignal);
};

/** Runs the coordinator; exits 0 after a signal, 2 on a usage error, 1 on an invalid configuration. */
export async function coordinatorCommand(
  args: readonly string[],
  io: CliIO,
  signals: ShutdownSignals = processSignals,
  reloadSignal: ReloadSignal = hangup,
): Promise<ExitCode> {
  const parsed = parseArgs(args, {
    booleans: ["mandatory-only", "allow-empty-config"],
    strings: [
      "config",
      "listen",
      "admin-listen",
      "server-concurrency",
      ...ADAPTIVE_FLAGS,
      "token-file",
      "hello-timeout",
      ...CONNECTION_FLAGS,
    ],
  });
  if (parsed.ok && parsed.booleans.has("help")) {
    io.stdout(HELP);
    return 0;
  }
  const fail = (msg: string): ExitCode => {
    io.stderr(`apf coordinator: ${msg}\nusage: ${COORDINATOR_USAGE}\n`);
    return 2;
  };
  if (!parsed.ok) return fail(parsed.error);
  if (parsed.positionals.length > 0) return fail(`unexpected argument ${parsed.positionals[0]}`);
  const last = (name: string) => parsed.strings.get(name)?.at(-1);
  const address = (name: string, fallback: HostPort | null) =>
    addressOption(last(name), name, fallback);
  const listen = address("listen", { hostname: "127.0.0.1", port: 7070 });
  if (typeof listen === "string") return fail(listen);
  const adminListen = address("admin-listen", null);
  if (typeof adminListen === "string") return fail(adminListen);
  const adaptive = adaptiveFlags(parsed);
  if (!adaptive.ok) return fail(adaptive.error);
  const sclText = adaptive.options === null ? last("server-concurrency") : undefined;
  const scl = sclText === undefined ? 600 : Number(sclText);
  if (!(/^\d+$/.test(sclText ?? "600") && Number.isSafeInteger(scl) && scl >= 1)) {
    return fail(
      `--server-concurrency must be a positive integer or auto, got ${JSON.stringify(sclText)}`,
    );
  }
  const limits = connectionLimitsOf(last);
  if (typeof limits === "string") return fail(limits);
  const helloText = last("hello-timeout");
  const helloTimeoutMs = helloText === undefined ? undefined : parseDurationMs(helloText);
  if (helloText !== undefined && !(helloTimeoutMs !== undefined && helloTimeoutMs >= 1)) {
    return fail(
      `--hello-timeout must be a duration of 1ms or more, like 10s, got ${
        JSON.stringify(helloText)
      }`,
    );
  }
  let token: string | null = null;
  const tokenFile = last("token-file");
  if (tokenFile !== undefined) {
    try {
      token = (await io.readTextFile(tokenFile)).trim();
    } catch (e) {
      // The path, never the content.
      io.stderr(`apf coordinator: cannot read the token file ${tokenFile}: ${messageOf(e)}\n`);
      return 2;
    }
    if (token.length < 16) return fail(`the token in ${tokenFile} must have 16 characters or more`);
  }
  const files = parsed.strings.get("config") ?? [];
  const load = async (): Promise<FlowControlConfiguration | string> => {
    const read = await readManifests(files, io);
    if (!read.ok) return read.error;
    const result = parseConfiguration({ manifests: read.sources });
    return result.ok ? result.configuration : result.errors.join("\n");
  };
  const first = await load();
  if (typeof first === "string") {
    io.stderr(`${first}\n`);
    return 1;
  }

  const say = tolerantStdout(io);
  const allowEmpty = parsed.booleans.has("allow-empty-config");
  let server;
  try {
    server = serveCoordinator({
      configuration: first,
      mandatoryOnly: parsed.booleans.has("mandatory-only"),
      serverConcurrencyLimit: adaptive.options ?? scl,
      listen: listen!,
      adminListen,
      token,
      ...limits,
      ...(helloTimeoutMs !== undefined && { helloTimeoutMs }),
      load: async () => {
        const next = await load();
        if (typeof next === "string") throw new Error(next);
        return next;
      },
      onRefusedHandshake: (client) =>
        io.stderr(
          `apf coordinator: refused client ${
            JSON.stringify(client)
          }: wrong or missing token (apf_coordinator_refused_handshakes_total)\n`,
        ),
      onReload: (result) => {
        if (result.applied) {
          say(`apf coordinator: configuration reloaded: ${formatConfigurationDiff(result.diff)}\n`);
        } else {
          io.stderr(
            `apf coordinator: reload refused, the old configuration keeps serving:\n${
              messageOf(result.error)
            }\n`,
          );
        }
      },
    });
  } catch (e) {
    if (!(e instanceof Deno.errors.AddrInUse || e instanceof Deno.errors.AddrNotAvailable)) {
      return fail(messageOf(e));
    }
    io.stderr(`apf coordinator: ${withFlagNames(messageOf(e))}\n`);
    return 1;
  }
  const unsubscribe = signals(() => {
    say("apf coordinator: shutting down\n");
    void server.shutdown();
  });
  const unsubscribeReload = reloadSignal(() => {
    // onReload logs the outcome.
    server.reload(undefined, { allowEmpty }).catch(() => {});
  });
  try {
    const ws = httpUrlOf(server.addr).replace(/^http/, "ws");
    say(
      `apf coordinator: listening on ${ws}${
        token === null ? " (no token: loopback only)" : " (clients must present the token)"
      }${adaptive.options === null ? "" : `; ${adaptiveText(adaptive.options)}`}\n`,
    );
    if (server.adminAddr !== null) {
      const admin = httpUrlOf(server.adminAddr);
      say(
        `apf coordinator: admin routes on ${admin} (/metrics, ${DEBUG_PREFIX}/dump_*, ` +
          `POST /reload); live dashboard: ${admin}${DASHBOARD_PATH}\n`,
      );
    }
    await server.finished;
    say("apf coordinator: stopped\n");
    return 0;
  } finally {
    unsubscribe();
    unsubscribeReload();
    await server.shutdown();
  }
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
