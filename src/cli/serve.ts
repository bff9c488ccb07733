/**
 * `apf serve`: the APF gateway in front of an HTTP upstream, until SIGINT or
 * SIGTERM, which drain in-flight requests and exit 0.
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
import { parseDurationMs } from "../_shared/duration.ts";
import { DASHBOARD_PATH, DEBUG_PREFIX } from "../observe/admin_router.ts";
import { connectCoordinator } from "../remote/client.ts";
import {
  BUDGET_FLAGS,
  BUDGET_FLAGS_HELP,
  BUDGET_FLAGS_USAGE,
  budgetFlagsOf,
  budgetStoreAt,
  gatewayHolder,
  type OpenedStore,
} from "./_budget_flags.ts";
import { noDelayWebSocket } from "../deno/no_delay_websocket.ts";
import { serveGateway } from "../deno/gateway.ts";
import {
  addressOption,
  type HostPort,
  httpUrlOf,
  parseUpstream,
  withFlagNames,
} from "./_address.ts";
import {
  CONNECTION_FLAGS,
  CONNECTION_FLAGS_HELP,
  CONNECTION_FLAGS_USAGE,
  connectionLimitsOf,
} from "./_connection_flags.ts";
import { helpText, parseArgs } from "./args.ts";
import { loadEffective } from "./effective_input.ts";
import { type CliIO, type ExitCode, tolerantStdout } from "./io.ts";

/** Usage line of the command. */
export const SERVE_USAGE =
  `apf serve --upstream <url> [--config <file>...] [--listen 127.0.0.1:8080] [--admin-listen 127.0.0.1:9090] ${ADAPTIVE_FLAGS_USAGE} [--trust-identity-headers] [--request-timeout <duration>] [--upstream-client http1|fetch] ${CONNECTION_FLAGS_USAGE} [--coordinator ws://HOST:PORT|redis://HOST:PORT|kv:PATH] [--coordinator-token-file F] [--coordinator-policy local|open|closed] [--fallback-fraction F] ${BUDGET_FLAGS_USAGE}`;

const HELP = helpText(
  SERVE_USAGE,
  `
Runs a reverse proxy governed by API Priority and Fairness in front of the
upstream: each request is classified, waits for seats in its priority level
(or gets 429 with Retry-After), and is forwarded with method, path, query,
headers (minus hop-by-hop ones, plus X-Forwarded-For) and body, both bodies
streamed. An unreachable upstream gives 502; one that has not answered within
the request timeout gives 504.

  --upstream <url>           where requests go (http: or https:; a path prefixes every request's)
  --config <file>            manifests merged with the built-in configuration (repeatable)
  --listen <host:port>       where clients connect (default 127.0.0.1:8080; port 0: any free port)
  --admin-listen <host:port> serve /metrics, ${DEBUG_PREFIX}/dump_* and the live
                             dashboard (${DEBUG_PREFIX}/) there only
${ADAPTIVE_FLAGS_HELP}
  --trust-identity-headers   take the user from X-Remote-User, X-Remote-Group and
                             X-Remote-Extra-* (only behind an authenticating proxy that sets
                             them); without it every request is anonymous
  --request-timeout <d>      Go duration (default 60s): a request queues a quarter of it at most
  --upstream-client C        http1 (default): a pooled HTTP/1.1 client (keep-alive, strict
                             RFC 9112 framing: a response it cannot frame safely is a 502);
                             fetch: Deno's fetch, for an upstream that speaks only HTTP/2 or
                             that the http1 client refuses
${CONNECTION_FLAGS_HELP}
  --coordinator <url>        take seats from a shared apf coordinator (ws:, wss:; its configuration is
                             the one classified with; --config serves the local fallback
                             until it is reached), or decide on seat budgets kept by it, by a
                             Redis or Valkey server (redis:, rediss:) or in a Deno KV file
                             (kv:PATH): see --coordinator-mode
  --coordinator-token-file F the coordinator's shared secret
  --coordinator-policy P     while the coordinator cannot be reached: local (default: a limiter
                             in this process with a fraction of the server limit), open (admit)
                             or closed (429, reason unavailable); no request waits past its
                             queue wait limit plus 1 s either way
  --fallback-fraction F      the local limiter's fraction of the server limit (default 0.1)
${BUDGET_FLAGS_HELP}

SIGINT or SIGTERM stops accepting connections, lets in-flight requests finish
and exits 0.
`,
);

/** Subscribes to the signals that stop the gateway; returns the unsubscribe function. */
export type ShutdownSignals = (onSignal: () => void) => () => void;

/** SIGINT and SIGTERM (SIGTERM where the platform has it). */
export const processSignals: ShutdownSignals = (onSignal) => {
  const names: Deno.Signal[] = Deno.build.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM"];
  for (const name of names) Deno.addSignalListener(name, onSignal);
  return () => {
    for (const name of names) Deno.removeSignalListener(name, onSignal);
  };
};

/**
 * Parses the options, starts the gateway, prints where it listens, and
 * returns 0 once a signal stopped it and in-flight requests are done. Exits
 * 2 on a usage error, 1 on an invalid configuration.
 */
export async function serveCommand(
  args: readonly string[],
  io: CliIO,
  signals: ShutdownSignals = processSignals,
): Promise<ExitCode> {
  const parsed = parseArgs(args, {
    booleans: ["trust-identity-headers"],
    strings: [
      "config",
      "upstream",
      "listen",
      "admin-listen",
      "server-concurrency",
      ...ADAPTIVE_FLAGS,
      "request-timeout",
      "upstream-client",
      "coordinator",
      "coordinator-token-file",
      "coordinator-policy",
      "fallback-fraction",
      ...BUDGET_FLAGS,
      ...CONNECTION_FLAGS,
    ],
  });
  if (parsed.ok && parsed.booleans.has("help")) {
    io.stdout(HELP);
    return 0;
  }
  const fail = (msg: string): ExitCode => {
    io.stderr(`apf serve: ${msg}\nusage: ${SERVE_USAGE}\n`);
    return 2;
  };
  if (!parsed.ok) return fail(parsed.error);
  const last = (name: string) => parsed.strings.get(name)?.at(-1);
  const upstreamText = last("upstream");
  if (upstreamText === undefined) return fail("--upstream is required");
  const upstream = parseUpstream(upstreamText);
  if (upstream === undefined) {
    return fail(
      `--upstream must be an http: or https: URL without credentials, query or fragment, got ${
        JSON.stringify(upstreamText)
      }`,
    );
  }
  const address = (name: string, fallback: HostPort | null) =>
    addressOption(last(name), name, fallback);
  const listen = address("listen", { hostname: "127.0.0.1", port: 8080 });
  if (typeof listen === "string") return fail(listen);
  const adminListen = address("admin-listen", null);
  if (typeof adminListen === "string") return fail(adminListen);
  const timeoutText = last("request-timeout");
  const requestTimeoutMs = timeoutText === undefined ? undefined : parseDurationMs(timeoutText);
  if (timeoutText !== undefined && !(requestTimeoutMs !== undefined && requestTimeoutMs >= 1)) {
    return fail(
      `--request-timeout must be a duration of 1ms or more, like 30s or 1m30s, got ${
        JSON.stringify(timeoutText)
      }`,
    );
  }
  const upstreamClient = last("upstream-client") ?? "http1";
  if (upstreamClient !== "http1" && upstreamClient !== "fetch") {
    return fail(`--upstream-client must be http1 or fetch, got ${JSON.stringify(upstreamClient)}`);
  }
  const limits = connectionLimitsOf(last);
  if (typeof limits === "string") return fail(limits);
  const coordinatorText = last("coordinator");
  if (coordinatorText !== undefined && !/^(wss?:\/\/|rediss?:\/\/|kv:)/.test(coordinatorText)) {
    return fail(
      `--coordinator must be a ws:, wss:, redis:, rediss: URL or kv:PATH, got ${
        JSON.stringify(coordinatorText.replace(/\/\/[^@/]*@/, "//…@"))
      }`,
    );
  }
  const policy = last("coordinator-policy") ?? "local";
  if (policy !== "local" && policy !== "open" && policy !== "closed") {
    return fail(
      `--coordinator-policy must be local, open or closed, got ${JSON.stringify(policy)}`,
    );
  }
  const fractionText = last("fallback-fraction");
  const fraction = fractionText === undefined ? undefined : Number(fractionText);
  if (fraction !== undefined && !(fraction > 0 && fraction <= 1)) {
    return fail(
      `--fallback-fraction must be a number in (0, 1], got ${JSON.stringify(fractionText)}`,
    );
  }
  const budget = budgetFlagsOf(last, coordinatorText);
  if (typeof budget === "string") return fail(budget);
  if (coordinatorText === undefined) {
    for (const name of ["coordinator-policy", "fallback-fraction", "coordinator-token-file"]) {
      if (last(name) !== undefined) return fail(`--${name} needs --coordinator`);
    }
  }
  let coordinatorToken: string | null = null;
  const tokenFile = last("coordinator-token-file");
  if (tokenFile !== undefined) {
    try {
      coordinatorToken = (await io.readTextFile(tokenFile)).trim();
    } catch (e) {
      // The path, never the content.
      io.stderr(`apf serve: cannot read the token file ${tokenFile}: ${messageOf(e)}\n`);
      return 2;
    }
  }
  const loaded = await loadEffective(parsed, io, SERVE_USAGE, { allowAuto: true });
  if (!loaded.ok) return loaded.code;
  const adaptive = adaptiveFlags(parsed);
  if (!adaptive.ok) return fail(adaptive.error);
  if (adaptive.options !== null && coordinatorText !== undefined && budget.mode !== "budget") {
    return fail(
      "--server-concurrency auto learns this gateway's own limit: with an exact --coordinator, the coordinator's limit is the one in force (run it with --server-concurrency auto)",
    );
  }
  const say = tolerantStdout(io);
  // Budget mode: this gateway decides on its share of each level, settled with the store.
  let lastStoreError = -Infinity;
  const shown = coordinatorText?.replace(/\/\/[^@/]*@/, "//…@"); // never a password
  let opened: OpenedStore | null = null;
  if (coordinatorText !== undefined && budget.mode === "budget") {
    try {
      opened = await budgetStoreAt(coordinatorText, coordinatorToken, io.resolvePath);
    } catch (e) {
      io.stderr(`apf serve: cannot open the budget store ${shown}: ${messageOf(e)}\n`);
      return 1;
    }
  }
  const holder = opened === null ? null : gatewayHolder(
    loaded.effective,
    opened.store,
    budget,
    policy,
    fraction,
    (e) => {
      // An outage fails every settle of every level: one line per 10 s is enough.
      if (Date.now() - lastStoreError < 10_000) return;
      lastStoreError = Date.now();
      io.stderr(`apf serve: budget store ${shown}: ${messageOf(e)}\n`);
    },
    adaptive.options,
  );
  if (holder !== null) {
    try {
      await holder.ready();
    } catch (e) {
      holder.close();
      await opened?.close();
      io.stderr(
        `apf serve: ${messageOf(e)}; check --coordinator-token-file ${
          tokenFile === undefined ? "(none given)" : tokenFile
        }\n`,
      );
      return 1;
    }
    say(
      `apf serve: deciding on seat budgets from ${shown} (lease ${budget.leaseMs} ms, ` +
        `period ${budget.periodMs} ms); when its lease ends without the store: policy ${policy}\n`,
    );
  }
  // The coordinator's configuration is the one classified with once it is reached; the local
  // one only serves the `local` fallback until then.
  const remote = coordinatorText === undefined || holder !== null
    ? null
    : connectCoordinator(coordinatorText, {
      token: coordinatorToken,
      client: "apf serve",
      policy,
      // Deno's WebSocket leaves Nagle's algorithm on: about 40 ms more per acquire (PROTOCOL.md).
      webSocket: noDelayWebSocket(),
      fallback: {
        configuration: loaded.effective,
        ...(fraction !== undefined && { fraction }),
      },
    });
  const unsubscribeConfiguration = remote?.onConfiguration((c) =>
    say(
      `apf serve: coordinator ${coordinatorText} sent its configuration ` +
        `(${c.objects.length} objects, server concurrency ${c.serverConcurrencyLimit}); ` +
        `while it is unreachable: policy ${policy}\n`,
    )
  );
  if (remote !== null) {
    // A refused token is a configuration error: stop here, before serving anyone. An unreachable
    // coordinator is not: the policy answers until it is reached.
    try {
      await remote.ready();
    } catch (e) {
      unsubscribeConfiguration?.();
      await remote.close();
      io.stderr(
        `apf serve: ${messageOf(e)}; check --coordinator-token-file ${
          tokenFile === undefined ? "(none given)" : tokenFile
        }\n`,
      );
      return 1;
    }
  }

  let gateway;
  try {
    gateway = serveGateway({
      upstream,
      config: loaded.effective,
      listen: listen!,
      adminListen,
      trustIdentityHeaders: parsed.booleans.has("trust-identity-headers"),
      ...(requestTimeoutMs !== undefined && { requestTimeoutMs }),
      upstreamClient,
      // With budgets the holder learns (each gateway from its own requests).
      ...(adaptive.options !== null && holder === null &&
        { serverConcurrencyLimit: adaptive.options }),
      ...limits,
      ...(remote !== null && { coordinator: remote }),
      ...(holder !== null && { coordinator: holder }),
      onUpstreamError: (e, req) => {
        // The path as forwarded, after the upstream's own (the query may carry secrets).
        const target = upstream.origin + upstream.pathname.replace(/\/+$/, "") +
          new URL(req.url).pathname;
        io.stderr(`apf serve: upstream error: ${req.method} ${target}: ${causeChain(e)}\n`);
      },
    });
  } catch (e) {
    unsubscribeConfiguration?.();
    await remote?.close();
    holder?.close();
    await opened?.close();
    io.stderr(`apf serve: ${withFlagNames(messageOf(e))}\n`);
    return 1;
  }
  const unsubscribe = signals(() => {
    say("apf serve: shutting down, letting in-flight requests finish\n");
    void gateway.shutdown();
  });
  try {
    const levels = loaded.effective.priorityLevels.length;
    const local = `${levels} priority levels, ${
      adaptive.options === null
        ? `server concurrency ${loaded.effective.serverConcurrencyLimit}`
        : adaptiveText(adaptive.options)
    }`;
    say(
      `apf serve: listening on ${httpUrlOf(gateway.addr)}, proxying to ${upstream.href} (${
        remote === null
          ? local
          : `classifying with the coordinator's configuration; the local one (${local}) ` +
            "serves the fallback only"
      })\n`,
    );
    if (gateway.adminAddr !== null) {
      const admin = httpUrlOf(gateway.adminAddr);
      say(
        `apf serve: admin routes on ${admin} (/metrics, ${DEBUG_PREFIX}/dump_*); ` +
          `live dashboard: ${admin}${DASHBOARD_PATH}\n`,
      );
    }
    await gateway.finished;
    say("apf serve: stopped\n");
    return 0;
  } finally {
    unsubscribe();
    unsubscribeConfiguration?.();
    await gateway.shutdown();
    await remote?.close();
    holder?.close();
    await opened?.close();
  }
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * `fetch failed: Connection refused (os error 111)`: fetch's own message
 * says nothing; the reason is in its `cause` (the Fetch standard's network
 * error wraps it).
 */
function causeChain(e: unknown): string {
  const parts: string[] = [];
  for (let c: unknown = e, depth = 0; c !== undefined && c !== null && depth < 4; depth++) {
    parts.push(messageOf(c));
    c = c instanceof Error ? c.cause : undefined;
  }
  // Deno's cause quotes the URL fetched, query included, and a query may carry secrets.
  return parts.join(": ").replace(/(https?:\/\/[^\s)?]*)\?[^\s)]*/g, "$1?…");
}
