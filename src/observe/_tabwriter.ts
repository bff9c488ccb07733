/**
 * A port of the cell-width behaviour of Go's `text/tabwriter` (flags 0,
 * padding character not a tab), which Kubernetes' debug dumps are printed
 * with. Internal to the dumps.
 *
 * Text is made of lines of tab-terminated cells; the text after a line's
 * last tab is not a cell of any column and is never padded. A column is a
 * run of adjacent lines that all have a cell at that position: it ends at
 * the first line with fewer cells, and its width is the widest cell of the
 * run plus the padding (at least the minimum width). Columns to the right
 * are formed only within the run of their left neighbour.
 *
 * @module
 */

/** Settings of {@linkcode tabwrite} (Go's `minwidth`, `padding`, `padchar`). */
export interface TabwriterOptions {
  /** Minimal cell width including any padding. */
  minWidth: number;
  /** Padding added to a cell's width when computing its column's width. */
  padding: number;
  /** Character used for padding (not a tab). */
  padChar: string;
}

/** Go's settings in Kubernetes' dumps: `tabwriter.NewWriter(w, 8, 0, 1, ' ', 0)`. */
export const DUMP_TABWRITER: TabwriterOptions = Object.freeze({
  minWidth: 8,
  padding: 1,
  padChar: " ",
});

/** Width of a cell: its number of code points (Go counts runes). */
function cellWidth(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/**
 * Aligns the tab-separated cells of `text` into space-padded columns, as
 * Go's tabwriter would print it after `Flush`.
 *
 * @example
 * ```ts ignore
 * tabwrite("a,\tb\nlonger name,\tc\n", DUMP_TABWRITER);
 * // "a,           b\nlonger name, c\n"
 * ```
 */
export function tabwrite(text: string, options: TabwriterOptions): string {
  const lines = text.split("\n").map((l) => l.split("\t"));
  const widths: number[] = [];
  let out = "";

  const writeLines = (line0: number, line1: number): void => {
    for (let i = line0; i < line1; i++) {
      const cells = lines[i]!;
      for (let j = 0; j < cells.length; j++) {
        const c = cells[j]!;
        out += c;
        if (j < widths.length) out += options.padChar.repeat(widths[j]! - cellWidth(c));
      }
      // The last line is the text after the final line feed (usually empty).
      if (i + 1 < lines.length) out += "\n";
    }
  };

  const format = (line0: number, line1: number): void => {
    const column = widths.length;
    for (let th = line0; th < line1; th++) {
      if (column >= lines[th]!.length - 1) continue;
      // A line with a cell in this column: print the lines before it, then its block.
      writeLines(line0, th);
      line0 = th;
      let width = options.minWidth;
      for (; th < line1; th++) {
        const cells = lines[th]!;
        if (column >= cells.length - 1) break;
        const w = cellWidth(cells[column]!) + options.padding;
        if (w > width) width = w;
      }
      widths.push(width);
      format(line0, th);
      widths.pop();
      line0 = th;
    }
    writeLines(line0, line1);
  };

  format(0, lines.length);
  return out;
}

/** Rows of a debug dump: cells joined by `",\t"`, aligned by {@linkcode DUMP_TABWRITER}. */
export function renderDumpRows(
  rows: ReadonlyArray<ReadonlyArray<string | number | boolean>>,
): string {
  return tabwrite(rows.map((r) => r.join(",\t") + "\n").join(""), DUMP_TABWRITER);
}
