/**
 * What a Prometheus text exposition offers a query: each sample name (a
 * histogram's `_bucket`, `_sum` and `_count` included) with its labels and
 * their values, and each family's `# TYPE`.
 */

/** The samples of one or more expositions, by sample name. */
export class SeriesIndex {
  /** Label name to the values seen, per sample name. */
  readonly samples: Map<string, Map<string, Set<string>>> = new Map();
  /** `# TYPE` of each family. */
  readonly types: Map<string, string> = new Map();

  /** Adds the samples and types of `text` (format 0.0.4). */
  add(text: string): this {
    for (const line of text.split("\n")) {
      const type = /^# TYPE (\S+) (\S+)$/.exec(line);
      if (type !== null) {
        this.types.set(type[1]!, type[2]!);
        continue;
      }
      if (line === "" || line.startsWith("#")) continue;
      const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? \S+$/.exec(line);
      if (sample === null) throw new SyntaxError(`Not a sample line: ${line}`);
      let labels = this.samples.get(sample[1]!);
      if (labels === undefined) this.samples.set(sample[1]!, labels = new Map());
      for (const m of (sample[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
        let values = labels.get(m[1]!);
        if (values === undefined) labels.set(m[1]!, values = new Set());
        values.add(JSON.parse(`"${m[2]!}"`));
      }
    }
    return this;
  }

  /** The label names of sample `name` (empty when it has none or does not exist). */
  labels(name: string): Set<string> {
    return new Set(this.samples.get(name)?.keys() ?? []);
  }

  /**
   * The `# TYPE` of the family sample `name` belongs to: `histogram` for a
   * histogram's `_bucket`, `_sum` and `_count`.
   */
  typeOf(name: string): string | undefined {
    const own = this.types.get(name);
    if (own !== undefined) return own;
    const part = /^(.*)_(bucket|sum|count)$/.exec(name);
    return part === null ? undefined : this.types.get(part[1]!);
  }
}
