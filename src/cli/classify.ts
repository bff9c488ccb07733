/**
 * `apf classify`: classifies NDJSON requests from standard input, one output
 * line per input line.
 *
 * @module
 */

import { type Classification, Classifier } from "../classify/classifier.ts";
import { flowHashToString } from "../classify/flow_hash.ts";
import { normalizeUser } from "../classify/identity.ts";
import type { RuleMatch } from "../classify/matching.ts";
import { type RequestInfo, RequestInfoResolver } from "../classify/request_info.ts";
import type { EffectivePriorityLevel } from "../config/mod.ts";
import { Dealer } from "../fairqueuing/shuffle_shard.ts";
import { formatBytes } from "./_streams.ts";
import { helpText, parseArgs } from "./args.ts";
import { loadEffective } from "./effective_input.ts";
import type { CliIO, ExitCode } from "./io.ts";

/** Usage line of the command. */
export const CLASSIFY_USAGE =
  "apf classify [--config <file>...] [--server-concurrency N] [--mandatory-only] [--explain] < requests.ndjson";

const HELP = helpText(
  CLASSIFY_USAGE,
  `
Reads NDJSON requests on standard input, one per line ({"user", "groups",
"uid", "method", "path", "query"}), and writes one NDJSON line per request:
its FlowSchema, priority level, distinguisher, flow hash and shuffle-sharding
hand. --explain adds the matching rule and subject. A malformed line, or one
longer than 64 KiB, gets {"error": ...} and processing continues. --config
files (each at most 16 MiB) are merged with the built-in configuration;
standard input is for requests, so --config - is refused.
`,
);

/** One input line. */
interface ClassifyInput {
  user?: string;
  groups?: string[];
  uid?: string;
  method: string;
  path: string;
  query?: string;
}

/** Most bytes of one request line; longer lines are skipped unread with an error line. */
const MAX_LINE_BYTES = 64 * 1024;

const tooLong = `line is longer than ${formatBytes(MAX_LINE_BYTES)}`;

/** UTF-8 length, computed only when the UTF-16 length leaves doubt. */
function byteLength(line: string): number {
  return line.length * 3 <= MAX_LINE_BYTES ? line.length : new TextEncoder().encode(line).length;
}

function parseInput(line: string): ClassifyInput {
  // The host already skips long lines unread; this catches hosts that do not.
  if (line.length > MAX_LINE_BYTES || byteLength(line) > MAX_LINE_BYTES) throw new Error(tooLong);
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (e) {
    throw new Error(`invalid JSON: ${(e as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new Error("expected a JSON object");
  }
  const v = value as Record<string, unknown>;
  const str = (key: string, required: boolean) => {
    const x = v[key];
    if (x === undefined || x === null) {
      if (required) throw new Error(`"${key}" is required`);
      return undefined;
    }
    if (typeof x !== "string") throw new Error(`"${key}" must be a string`);
    return x;
  };
  const method = str("method", true)!;
  if (!/^[A-Za-z]+$/.test(method)) {
    throw new Error(`"method" must be an HTTP method, got ${JSON.stringify(method)}`);
  }
  const path = str("path", true)!;
  if (!path.startsWith("/")) {
    throw new Error(`"path" must start with "/", got ${JSON.stringify(path)}`);
  }
  const groups = v.groups;
  if (
    groups !== undefined && groups !== null &&
    (!Array.isArray(groups) || !groups.every((g) => typeof g === "string"))
  ) {
    throw new Error('"groups" must be a list of strings');
  }
  const input: ClassifyInput = { method, path };
  const user = str("user", false), uid = str("uid", false), query = str("query", false);
  if (user !== undefined) input.user = user;
  if (uid !== undefined) input.uid = uid;
  if (query !== undefined) input.query = query;
  if (Array.isArray(groups)) input.groups = groups;
  return input;
}

function explain(c: Classification): Record<string, unknown> {
  const m: RuleMatch | null = c.match;
  if (m === null) return { flowSchema: c.flowSchema.name, fallback: true };
  const rules = c.flowSchema.object.spec.rules![m.rule]!;
  return {
    flowSchema: c.flowSchema.name,
    rule: `spec.rules[${m.rule}].${m.kind}[${m.index}]`,
    subject: `spec.rules[${m.rule}].subjects[${m.subject}]`,
    matchedSubject: rules.subjects[m.subject],
    matchedRule: rules[m.kind]![m.index],
  };
}

/** Classifies each NDJSON line of standard input; malformed lines get `{"error": ...}`. */
export async function classifyCommand(args: readonly string[], io: CliIO): Promise<ExitCode> {
  const parsed = parseArgs(args, {
    booleans: ["mandatory-only", "explain"],
    strings: ["config", "server-concurrency"],
  });
  if (parsed.ok && parsed.booleans.has("help")) {
    io.stdout(HELP);
    return 0;
  }
  const loaded = await loadEffective(parsed, io, CLASSIFY_USAGE, { readsStdin: true });
  if (!loaded.ok) return loaded.code;
  const classifier = new Classifier(loaded.effective);
  const resolver = new RequestInfoResolver();
  const dealers = new Map<EffectivePriorityLevel, Dealer>();
  const explainLines = loaded.args.booleans.has("explain");
  for await (const line of io.stdinLines({ maxLineBytes: MAX_LINE_BYTES })) {
    if (typeof line === "string" && line.trim() === "") continue;
    let out: Record<string, unknown>;
    try {
      if (typeof line !== "string") throw new Error(tooLong);
      const input = parseInput(line);
      const user = normalizeUser({
        name: input.user ?? "",
        groups: input.groups ?? [],
        ...(input.uid && { uid: input.uid }),
      });
      const ri: RequestInfo = resolver.describe(input.method, input.path, input.query ?? "");
      const c = classifier.classify(user, ri);
      let hand: number[] | null = null;
      if (c.flowHash !== null) {
        const level = c.priorityLevel;
        let dealer = dealers.get(level);
        if (dealer === undefined) {
          dealers.set(level, dealer = new Dealer(level.queuing!.queues, level.queuing!.handSize));
        }
        hand = Array.from(dealer.dealIntoHandFromHalves(c.flowHash.hi, c.flowHash.lo));
      }
      out = {
        flowSchema: c.flowSchema.name,
        priorityLevel: c.priorityLevel.name,
        distinguisher: c.distinguisher,
        flowHash: c.flowHash === null ? null : flowHashToString(c.flowHash),
        hand,
        requestInfo: ri,
      };
      if (explainLines) out.explain = explain(c);
    } catch (e) {
      // A bad line gets its own error line; the stream goes on.
      out = { error: e instanceof Error ? e.message : String(e) };
    }
    io.stdout(`${JSON.stringify(out)}\n`);
  }
  return 0;
}
