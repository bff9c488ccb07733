/**
 * Plain-text tables for terminal output.
 *
 * @module
 */

/** Renders rows as left-aligned columns separated by two spaces. */
export function renderTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
): string {
  // A loop, not Math.max(...column): a configuration may have more rows than the stack has room for.
  const widths = header.map((h) => h.length);
  for (const r of rows) {
    for (let i = 0; i < widths.length; i++) widths[i] = Math.max(widths[i]!, (r[i] ?? "").length);
  }
  const line = (cells: readonly string[]) =>
    cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  ").trimEnd() + "\n";
  return line(header) + rows.map(line).join("");
}
