/**
 * Merges Prometheus text expositions (format 0.0.4) of several registries
 * into one, family by family: what a scrape of many Durable Objects needs.
 *
 * @module
 */

interface Family {
  help: string | null;
  type: string | null;
  samples: string[];
  seen: Set<string>;
}

/** The series of a sample line: everything before the value. */
function seriesOf(line: string): string {
  const brace = line.indexOf("}");
  const end = brace >= 0 ? brace + 1 : line.indexOf(" ");
  return end > 0 ? line.slice(0, end) : line;
}

/** The family a sample belongs to: its name, minus a histogram's suffix when that family exists. */
function familyOf(name: string, families: Map<string, Family>): string {
  for (const suffix of ["_bucket", "_sum", "_count"]) {
    if (name.endsWith(suffix)) {
      const base = name.slice(0, -suffix.length);
      if (families.has(base)) return base;
    }
  }
  return name;
}

/**
 * One exposition with every family of `texts` once (its `# HELP` and
 * `# TYPE` from the first text that has them) and every series once (the
 * first text's sample wins when two texts have the same series).
 *
 * @example
 * ```ts
 * import { mergeExpositions } from "./mod.ts";
 * mergeExpositions([
 *   '# HELP x A gauge\n# TYPE x gauge\nx{level="a"} 1\n',
 *   '# HELP x A gauge\n# TYPE x gauge\nx{level="b"} 2\n',
 * ]); // one family x, two series
 * ```
 */
export function mergeExpositions(texts: readonly string[]): string {
  const families = new Map<string, Family>();
  const family = (name: string): Family => {
    let f = families.get(name);
    if (f === undefined) {
      families.set(name, f = { help: null, type: null, samples: [], seen: new Set() });
    }
    return f;
  };
  for (const text of texts) {
    for (const line of text.split("\n")) {
      if (line === "") continue;
      const meta = /^# (HELP|TYPE) (\S+)/.exec(line);
      if (meta !== null) {
        const f = family(meta[2]!);
        if (meta[1] === "HELP") f.help ??= line;
        else f.type ??= line;
        continue;
      }
      if (line.startsWith("#")) continue;
      const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)?.[0];
      if (name === undefined) continue;
      const f = family(familyOf(name, families));
      const series = seriesOf(line);
      if (f.seen.has(series)) continue;
      f.seen.add(series);
      f.samples.push(line);
    }
  }
  let out = "";
  for (const f of families.values()) {
    if (f.help !== null) out += f.help + "\n";
    if (f.type !== null) out += f.type + "\n";
    for (const s of f.samples) out += s + "\n";
  }
  return out;
}
