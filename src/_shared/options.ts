/**
 * Refusing option names a function does not know: in JavaScript a
 * misspelled option (`serverConcurrency` for `serverConcurrencyLimit`) would
 * otherwise be ignored without a word, and its default silently used.
 *
 * @module
 */

/**
 * Throws a TypeError naming every key of `options` that is not in `known`,
 * each with the known name closest to it.
 *
 * @throws {TypeError} `Cannot <what>: unknown option "serverConcurrency" (did you mean "serverConcurrencyLimit"?)`,
 * or `Cannot <what>: unknown options "a" (did you mean "b"?), "c"`.
 */
export function checkOptionNames(
  what: string,
  options: object,
  known: readonly string[],
): void {
  const unknown = Object.keys(options).filter((key) => !known.includes(key));
  if (unknown.length === 0) return;
  const named = unknown.map((key) => {
    const near = closest(key, known);
    return `${JSON.stringify(key)}${
      near === null ? "" : ` (did you mean ${JSON.stringify(near)}?)`
    }`;
  });
  throw new TypeError(
    `Cannot ${what}: unknown option${unknown.length === 1 ? "" : "s"} ${named.join(", ")}`,
  );
}

/** The entry of `names` nearest to `word` (edit distance, case-insensitive), if near enough. */
function closest(word: string, names: readonly string[]): string | null {
  let best: string | null = null;
  let bestDistance = Infinity;
  const w = word.toLowerCase();
  for (const name of names) {
    const n = name.toLowerCase();
    // A prefix (a name cut short) is as near as it gets.
    const d = n.startsWith(w) || w.startsWith(n) ? 1 : editDistance(w, n);
    if (d < bestDistance) {
      bestDistance = d;
      best = name;
    }
  }
  return bestDistance <= Math.max(2, Math.floor(word.length / 3)) ? best : null;
}

/** Levenshtein distance. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(
        previous[j]! + 1,
        row[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = row;
  }
  return previous[b.length]!;
}
