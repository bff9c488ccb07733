/**
 * A strict parser of the Prometheus text format 0.0.4, enough to read back
 * what {@linkcode Registry.expose} writes (tests use it to check values).
 * Internal: not exported from the package.
 *
 * @module
 */

/** One sample line. */
export interface ParsedSample {
  /** The sample name (for histograms: `x_bucket`, `x_sum`, `x_count`). */
  name: string;
  /** Label values by name. */
  labels: Record<string, string>;
  /** The value. */
  value: number;
}

/** One metric family: its `# HELP`, `# TYPE` and samples. */
export interface ParsedFamily {
  /** The family name. */
  name: string;
  /** The unescaped help text. */
  help: string;
  /** `counter`, `gauge`, `histogram`, `summary` or `untyped`. */
  type: string;
  /** Samples in order. */
  samples: ParsedSample[];
}

const NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)(?: (-?\\d+))?$`);
const SUFFIXES: Record<string, string[]> = {
  histogram: ["_bucket", "_sum", "_count"],
  summary: ["", "_sum", "_count"],
};

/**
 * Parses an exposition into families by name.
 *
 * @throws {SyntaxError} naming the line for anything malformed: bad
 * escapes, samples before their `# TYPE`, duplicate families or series.
 */
export function parseExposition(text: string): Map<string, ParsedFamily> {
  const families = new Map<string, ParsedFamily>();
  const seen = new Set<string>();
  let current: ParsedFamily | null = null;
  const lines = text.split("\n");
  if (lines.pop() !== "") throw new SyntaxError("exposition must end with a line feed");
  lines.forEach((line, i) => {
    const fail = (why: string): never => {
      throw new SyntaxError(`line ${i + 1}: ${why}: ${JSON.stringify(line)}`);
    };
    const meta = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line);
    if (meta !== null) {
      const [, kind, name, rest] = meta as unknown as [string, string, string, string];
      let f = families.get(name);
      if (kind === "HELP") {
        if (f !== undefined) fail("duplicate family");
        f = { name, help: unescape(rest, false, fail), type: "untyped", samples: [] };
        families.set(name, f);
      } else {
        if (f === undefined || f.samples.length > 0) fail("# TYPE must follow # HELP");
        if (!/^(counter|gauge|histogram|summary|untyped)$/.test(rest)) fail("unknown type");
        f!.type = rest;
      }
      current = f!;
      return;
    }
    if (line.startsWith("#")) return;
    const m = SAMPLE.exec(line);
    if (m === null) return fail("malformed sample");
    const [, name, labelText, valueText] = m as unknown as [
      string,
      string,
      string | undefined,
      string,
    ];
    const f = current as ParsedFamily | null;
    const suffixes = f === null ? [] : (SUFFIXES[f.type] ?? [""]);
    if (f === null || !suffixes.some((s) => name === f.name + s)) fail("sample outside its family");
    const labels = parseLabels(labelText ?? "", fail);
    const key = name + JSON.stringify(labels);
    if (seen.has(key)) fail("duplicate series");
    seen.add(key);
    f!.samples.push({ name, labels, value: parseValue(valueText, fail) });
  });
  return families;
}

/** The value of the sample `name` whose labels are exactly `labels`, if present. */
export function sampleValue(
  families: Map<string, ParsedFamily>,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const want = JSON.stringify(Object.entries(labels).sort());
  for (const f of families.values()) {
    for (const s of f.samples) {
      if (s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === want) {
        return s.value;
      }
    }
  }
  return undefined;
}

function parseValue(text: string, fail: (why: string) => never): number {
  if (text === "+Inf") return Infinity;
  if (text === "-Inf") return -Infinity;
  if (text === "NaN") return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) fail("malformed value");
  return Number(text);
}

function parseLabels(text: string, fail: (why: string) => never): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const m = /^([a-zA-Z_][a-zA-Z0-9_]*)="/.exec(text.slice(i));
    if (m === null) fail("malformed label");
    const name = m![1]!;
    i += m![0].length;
    let raw = "";
    while (i < text.length && text[i] !== '"') {
      if (text[i] === "\\") raw += text[i++];
      raw += text[i++] ?? "";
    }
    if (text[i] !== '"') fail("unterminated label value");
    if (name in labels) fail(`duplicate label ${name}`);
    labels[name] = unescape(raw, true, fail);
    i++;
    if (i < text.length && text[i++] !== ",") fail("expected , between labels");
  }
  return labels;
}

function unescape(s: string, quotes: boolean, fail: (why: string) => never): string {
  return s.replace(/\\(.?)/g, (_, c: string) => {
    if (c === "\\") return "\\";
    if (c === "n") return "\n";
    if (c === '"' && quotes) return '"';
    return fail(`bad escape \\${c}`);
  });
}
