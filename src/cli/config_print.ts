/**
 * `apf config print`: the effective configuration, as a server would run it.
 *
 * @module
 */

import type { EffectiveConfiguration, EffectiveFlowSchema } from "../config/mod.ts";
import { helpText, parseArgs } from "./args.ts";
import { loadEffective } from "./effective_input.ts";
import type { CliIO, ExitCode } from "./io.ts";
import { renderTable } from "./table.ts";

/** Usage line of the command. */
export const CONFIG_PRINT_USAGE =
  "apf config print [--config <file>...] [--server-concurrency N] [--mandatory-only] [--json]";

/** What `apf config print --help` prints. */
export const CONFIG_PRINT_HELP: string = helpText(
  CONFIG_PRINT_USAGE,
  `
Prints the effective configuration a server would run: the --config files
(- is standard input; each at most 16 MiB) merged with the built-in objects,
then each priority level's limits for a server concurrency limit N (default
600) and the FlowSchemas in matching order. --mandatory-only starts from the
mandatory objects alone; --json prints one JSON object instead of tables.
`,
);

/** The `--json` document. */
export interface ConfigPrintJson {
  /** The server concurrency limit used. */
  serverConcurrencyLimit: number;
  /** Σ shares. */
  shareSum: number;
  /** Σ NominalCL. */
  nominalSum: number;
  /** One entry per priority level. */
  priorityLevels: {
    name: string;
    type: string;
    limitResponse: string | null;
    shares: number;
    nominal: number;
    lendable: number;
    borrowing: number;
    min: number;
    max: number;
    currentLimit: number;
    queues: number | null;
    handSize: number | null;
    queueLengthLimit: number | null;
    maxSeats: number | null;
  }[];
  /** FlowSchemas in matching order. */
  flowSchemas: FlowSchemaJson[];
  /** FlowSchemas that reference a missing level and match nothing. */
  dangling: FlowSchemaJson[];
  /** What merging with the built-in objects changed. */
  notes: string[];
}

/** One FlowSchema in the `--json` document. */
export interface FlowSchemaJson {
  /** Matching precedence. */
  precedence: number;
  /** Schema name. */
  name: string;
  /** The level the schema assigns to. */
  priorityLevel: string;
  /** `ByUser`, `ByNamespace`, or `null` (one flow). */
  distinguisher: string | null;
}

function schemaJson(fs: EffectiveFlowSchema): FlowSchemaJson {
  return {
    precedence: fs.precedence,
    name: fs.name,
    priorityLevel: fs.priorityLevel,
    distinguisher: fs.distinguisher ?? null,
  };
}

/** The effective configuration as the `--json` document. */
export function toConfigJson(eff: EffectiveConfiguration, notes: string[]): ConfigPrintJson {
  return {
    serverConcurrencyLimit: eff.serverConcurrencyLimit,
    shareSum: eff.shareSum,
    nominalSum: eff.nominalSum,
    priorityLevels: eff.priorityLevels.map((pl) => ({
      name: pl.name,
      type: pl.type,
      limitResponse: pl.limitResponse ?? null,
      shares: pl.shares,
      nominal: pl.nominal,
      lendable: pl.lendable,
      borrowing: pl.borrowing,
      min: pl.min,
      max: pl.max,
      currentLimit: pl.currentLimit,
      queues: pl.queuing?.queues ?? null,
      handSize: pl.queuing?.handSize ?? null,
      queueLengthLimit: pl.queuing?.queueLengthLimit ?? null,
      maxSeats: pl.maxSeats ?? null,
    })),
    flowSchemas: eff.flowSchemas.map(schemaJson),
    dangling: eff.dangling.map(schemaJson),
    notes,
  };
}

/** The effective configuration as text tables. */
export function renderConfig(json: ConfigPrintJson): string {
  const dash = (n: number | string | null) => (n === null ? "-" : String(n));
  let out = `Priority levels (server concurrency limit ${json.serverConcurrencyLimit}, ` +
    `shares ${json.shareSum}, nominal sum ${json.nominalSum})\n`;
  out += renderTable(
    [
      "NAME",
      "TYPE",
      "SHARES",
      "NOMINAL",
      "LENDABLE",
      "BORROWING",
      "MIN",
      "MAX",
      "CURRENT",
      "QUEUES",
      "HANDSIZE",
      "QUEUELENGTH",
      "MAXSEATS",
    ],
    json.priorityLevels.map((pl) => [
      pl.name,
      pl.limitResponse === null ? pl.type : `${pl.type}/${pl.limitResponse}`,
      ...[pl.shares, pl.nominal, pl.lendable, pl.borrowing, pl.min, pl.max, pl.currentLimit].map(
        String,
      ),
      ...[pl.queues, pl.handSize, pl.queueLengthLimit, pl.maxSeats].map(dash),
    ]),
  );
  const schemaRows = (list: FlowSchemaJson[]) =>
    list.map((fs) => [String(fs.precedence), fs.name, fs.priorityLevel, dash(fs.distinguisher)]);
  const schemaHeader = ["PRECEDENCE", "NAME", "PRIORITY LEVEL", "DISTINGUISHER"];
  out += `\nFlow schemas (matching order)\n${
    renderTable(schemaHeader, schemaRows(json.flowSchemas))
  }`;
  if (json.dangling.length > 0) {
    out += `\nDangling flow schemas (missing priority level; they match nothing)\n` +
      renderTable(schemaHeader, schemaRows(json.dangling));
  }
  if (json.notes.length > 0) out += `\nNotes\n${json.notes.map((n) => `  ${n}\n`).join("")}`;
  return out;
}

/** Runs `apf config print`; exits 1 on an invalid configuration, 2 on usage or read errors. */
export async function configPrintCommand(args: readonly string[], io: CliIO): Promise<ExitCode> {
  const parsed = parseArgs(args, {
    booleans: ["mandatory-only", "json"],
    strings: ["config", "server-concurrency"],
  });
  if (parsed.ok && parsed.booleans.has("help")) {
    io.stdout(CONFIG_PRINT_HELP);
    return 0;
  }
  const loaded = await loadEffective(parsed, io, CONFIG_PRINT_USAGE);
  if (!loaded.ok) return loaded.code;
  const json = toConfigJson(loaded.effective, loaded.notes);
  io.stdout(
    loaded.args.booleans.has("json") ? `${JSON.stringify(json, null, 2)}\n` : renderConfig(json),
  );
  return 0;
}
