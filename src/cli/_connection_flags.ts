/**
 * The connection limits on the command line, shared by `apf serve` and
 * `apf coordinator`: `--header-timeout`, `--idle-timeout` (Go durations)
 * and `--max-connections`.
 *
 * @module
 */

import { parseDurationMs } from "../_shared/duration.ts";
import type { ConnectionLimits } from "../deno/http_server.ts";

/** The flags' names, for `parseArgs`'s `strings`. */
export const CONNECTION_FLAGS: readonly string[] = [
  "header-timeout",
  "idle-timeout",
  "max-connections",
];

/** Their usage, for the usage line. */
export const CONNECTION_FLAGS_USAGE =
  "[--header-timeout <duration>] [--idle-timeout <duration>] [--max-connections N]";

/** Their help, aligned with the commands' other flags. */
export const CONNECTION_FLAGS_HELP =
  `  --header-timeout <d>       Go duration (default 10s): a connection that has not sent a
                             whole request head by then is closed
  --idle-timeout <d>         Go duration (default 75s): a keep-alive connection waiting that
                             long for its next request is closed
  --max-connections N        connections open at once per listener (default 10000); past it
                             a new connection is answered 503 and closed`;

/**
 * The limits the flags give (those not given are left to the defaults), or
 * the usage error to print.
 */
export function connectionLimitsOf(
  last: (name: string) => string | undefined,
): ConnectionLimits | string {
  const limits: ConnectionLimits = {};
  for (
    const [flag, key] of [["header-timeout", "headerTimeoutMs"], [
      "idle-timeout",
      "idleTimeoutMs",
    ]] as const
  ) {
    const text = last(flag);
    if (text === undefined) continue;
    const ms = parseDurationMs(text);
    if (!(ms !== undefined && ms >= 1)) {
      return `--${flag} must be a duration of 1ms or more, like 10s or 1m30s, got ${
        JSON.stringify(text)
      }`;
    }
    limits[key] = ms;
  }
  const maxText = last("max-connections");
  if (maxText !== undefined) {
    const max = Number(maxText);
    if (!(/^\d+$/.test(maxText) && Number.isSafeInteger(max) && max >= 1)) {
      return `--max-connections must be a positive integer, got ${JSON.stringify(maxText)}`;
    }
    limits.maxConnections = max;
  }
  return limits;
}
