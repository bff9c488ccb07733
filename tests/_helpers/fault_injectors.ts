/**
 * Faults for the seat-budget tests with real processes, besides stopping a
 * process (`SIGSTOP`, `apf_gateway.ts`) and restarting Redis empty
 * (`redis_server.ts`): a process whose wall clock is off (libfaketime), and
 * a forged line in a Redis ledger (redis-cli, as whoever can write to the
 * store would).
 */

import { redisCli, type RedisServer } from "./redis_server.ts";

/** Where Debian's `libfaketime` is. */
export const FAKETIME_LIB = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

/** True where {@linkcode FAKETIME_LIB} is not installed: the clock tests are then ignored. */
export const FAKETIME_MISSING: boolean = (() => {
  try {
    return !Deno.statSync(FAKETIME_LIB).isFile;
  } catch {
    return true;
  }
})();

/**
 * The environment that runs a process under libfaketime, `offset` (like
 * `+10s`) off. Deno's `Date.now()` moves by it; its `performance.now()`
 * counts from the process's start and does not.
 */
export function fakeClockEnv(offset: string): Record<string, string> {
  return { LD_PRELOAD: FAKETIME_LIB, FAKETIME: offset };
}

/**
 * The forged line of the issue: every seat, a limit to match, until the
 * year 30000; no `beat`, `leaseMs` or `drainMs` (not a line a holder
 * writes).
 */
export const FORGED_LINE: Readonly<Record<string, number>> = {
  claim: 1e9,
  demand: 0,
  limit: 1e9,
  expiresAt: Date.UTC(30000, 0, 1),
};

/** A forged line of a holder's shape whose claim and limit are above any level's. */
export const FORGED_SHAPED_LINE: Readonly<Record<string, number>> = {
  ...FORGED_LINE,
  beat: 1,
  leaseMs: 1_000,
  drainMs: 1_000,
};

/** A Redis ledger's key: `RedisBudgetStore`'s default prefix and the level. */
export function redisLedgerKey(level: string): string {
  return `apf:budgets:${level}`;
}

/** Adds a line to a ledger, keeping the others, under a new version; returns the lines kept. */
const FORGE_SCRIPT = `
local text = redis.call('HGET', KEYS[1], 'ledger')
local ledger = text and cjson.decode(text) or { holders = {} }
local kept = 0
for _ in pairs(ledger.holders) do kept = kept + 1 end
ledger.holders[ARGV[1]] = cjson.decode(ARGV[2])
redis.call('HSET', KEYS[1], 'version', ARGV[3], 'ledger', cjson.encode(ledger))
return kept
`;

/**
 * Adds `line` under `id` to the Redis ledger of `level`, keeping the lines
 * there, under a new version (`HSET` of `version` and `ledger`, as
 * `RedisBudgetStore` keeps them), in one script: no holder's write in
 * between is lost. Returns how many lines it kept.
 */
export async function forgeRedisLine(
  server: RedisServer,
  level: string,
  id: string,
  line: Readonly<Record<string, number>> = FORGED_LINE,
): Promise<number> {
  const version = `forged-${crypto.randomUUID()}`;
  const args = [id, JSON.stringify(line), version];
  return Number(await redisCli(server, "EVAL", FORGE_SCRIPT, "1", redisLedgerKey(level), ...args));
}

/** The ids of the lines of the Redis ledger of `level` (none when it has no ledger). */
export async function redisLedgerIds(server: RedisServer, level: string): Promise<string[]> {
  const text = await redisCli(server, "HGET", redisLedgerKey(level), "ledger");
  return text === "" ? [] : Object.keys((JSON.parse(text) as { holders: object }).holders);
}
