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
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  ").trimEnd() + "\n";
  return line(header) + rows.map(line).join("");
}
