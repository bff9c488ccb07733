/**
 * Seat budgets under faults, with real processes: three `apf serve` gateways
 * of a checkout deciding on budgets from one store (`--budget-lease 2s
 * --budget-period 500ms`, the level `tenants` of
 * `tests/cli/fixtures/tenants.yaml`, 12 seats at `--server-concurrency 42`),
 * an upstream that counts the requests in flight (40 ms each), and equal
 * load on every gateway (8 closed-loop clients each, every client its own
 * user). One fault per run:
 *
 * - `clocks`: g0 under libfaketime 10 s ahead, g1 10 s behind, g2 real;
 *   10 s of load measured;
 * - `freeze`: g0 stopped (SIGSTOP) for 8 s under load (`--freeze-ms`; past
 *   its lease, drain time and skew bound, 5 s, and a period: the others
 *   have taken its seats back), then SIGCONT; the peak in the 3 s after it,
 *   and the time until g0 serves a request sent after it;
 * - `amnesia` (redis): redis-server (no persistence) killed and restarted
 *   empty, three times 4 s apart; the peak in the 3 s after each kill, and
 *   the time until every gateway serves again;
 * - `forged` (redis): a ledger line claiming 1e9 seats until the year 30000
 *   (without the `beat` and terms a holder writes) added once, with
 *   redis-cli in one script, beside the gateways' lines; whether and when
 *   the level is served again within 15 s.
 *
 * Each run prints one JSON line (`FaultResult` of
 * `tests/_helpers/budget_faults.ts`): the level's limit, the upstream's peak
 * in flight (baseline, from the fault on, in the fault's window), each
 * gateway's 200s and share, the recovery time where meaningful, and notes
 * (`FINDING:` for a peak over the limit or a gateway under 15% of the 200s).
 * The gateways get exactly the permissions of the root's `apf` task (plus
 * `--allow-write=<dir>` for kv: where the task lacks it, as before 7174e67;
 * the note says so).
 *
 * Run from the repository root (needs redis-server, redis-cli, libfaketime):
 *
 *   deno run -A bench/budget_faults.ts [--root PATH] [--fault clocks|freeze|amnesia|forged|all]
 *     [--store redis|kv] [--runs N] [--server-concurrency N] [--clients N] [--freeze-ms N]
 *
 * `--root` is the checkout whose `src/cli/main.ts` and `deno.json` run the
 * gateways (default: this repository). `--fault all` without `--store` runs
 * every fault on redis and `freeze` on kv too. Progress goes to stderr.
 */

import { parseArgs } from "node:util";
import {
  type Fault,
  runFault,
  type StoreKind,
  THIS_ROOT,
} from "../tests/_helpers/budget_faults.ts";

const FAULTS: readonly Fault[] = ["clocks", "freeze", "amnesia", "forged"];

function usage(message: string): never {
  console.error(`budget_faults: ${message}`);
  console.error(
    "usage: deno run -A bench/budget_faults.ts [--root PATH] " +
      "[--fault clocks|freeze|amnesia|forged|all] [--store redis|kv] [--runs N] " +
      "[--server-concurrency N] [--clients N] [--freeze-ms N]",
  );
  Deno.exit(2);
}

let flags: {
  root?: string;
  fault: string;
  store?: string;
  runs: string;
  "server-concurrency"?: string;
  clients?: string;
  "freeze-ms"?: string;
};
try {
  flags = parseArgs({
    args: Deno.args,
    options: {
      root: { type: "string" },
      fault: { type: "string", default: "all" },
      store: { type: "string" },
      runs: { type: "string", default: "1" },
      "server-concurrency": { type: "string" },
      clients: { type: "string" },
      "freeze-ms": { type: "string" },
    },
  }).values;
} catch (e) {
  usage((e as Error).message);
}
const root = (flags.root ?? THIS_ROOT).replace(/\/$/, "");
const runs = Number(flags.runs);
if (!Number.isInteger(runs) || runs < 1) usage(`--runs must be a positive integer`);
const number = (name: string, text: string | undefined): number | undefined => {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) usage(`--${name} must be a positive integer`);
  return n;
};
const serverConcurrency = number("server-concurrency", flags["server-concurrency"]);
const clientsPerGateway = number("clients", flags.clients);
const freezeMs = number("freeze-ms", flags["freeze-ms"]);
if (flags.store !== undefined && flags.store !== "redis" && flags.store !== "kv") {
  usage(`--store must be redis or kv, got ${flags.store}`);
}
if (flags.fault !== "all" && !FAULTS.includes(flags.fault as Fault)) {
  usage(`--fault must be one of ${FAULTS.join(", ")} or all, got ${flags.fault}`);
}

const plan: [Fault, StoreKind][] = [];
const faults = flags.fault === "all" ? FAULTS : [flags.fault as Fault];
for (const fault of faults) {
  const redisOnly = fault === "amnesia" || fault === "forged";
  if (flags.store === undefined) {
    plan.push([fault, "redis"]);
    if (fault === "freeze" && flags.fault === "all") plan.push([fault, "kv"]);
  } else if (flags.store === "kv" && redisOnly) {
    console.error(`budget_faults: skipping ${fault} (needs redis)`);
  } else {
    plan.push([fault, flags.store as StoreKind]);
  }
}

if (plan.length === 0) usage(`nothing to run: ${flags.fault} on ${flags.store}`);

// Ctrl-C stops the run in progress cleanly (its gateways, store and upstream).
const interrupted = new AbortController();
const onInterrupt = () => interrupted.abort();
Deno.addSignalListener("SIGINT", onInterrupt);
let failures = 0;
try {
  for (const [fault, store] of plan) {
    for (let run = 1; run <= runs && !interrupted.signal.aborted; run++) {
      try {
        const result = await runFault({
          fault,
          store,
          root,
          ...(serverConcurrency !== undefined && { serverConcurrency }),
          ...(clientsPerGateway !== undefined && { clientsPerGateway }),
          ...(freezeMs !== undefined && { freezeMs }),
          signal: interrupted.signal,
          log: (line) => console.error(`budget_faults: ${line}`),
        });
        console.log(JSON.stringify({ run, ...result }));
      } catch (e) {
        failures++;
        console.error(`budget_faults: ${fault}/${store} run ${run} failed:`, e);
      }
    }
  }
} finally {
  Deno.removeSignalListener("SIGINT", onInterrupt);
}
if (failures > 0 || interrupted.signal.aborted) Deno.exitCode = 1;
