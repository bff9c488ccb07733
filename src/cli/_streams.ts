/**
 * Bounded reading of byte streams for the CLI: a whole input up to a byte
 * limit, and lines up to a per-line limit. Both stop pulling as soon as a
 * limit is exceeded, so `/dev/zero` or a newline-free gigabyte costs at most
 * the limit plus one chunk of memory.
 *
 * @module
 */

import type { InputLine } from "./io.ts";

/** Renders a byte count the way limits are documented: `16 MiB`, `64 KiB`, `100 bytes`. */
export function formatBytes(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} byte${n === 1 ? "" : "s"}`;
}

/** Thrown by {@linkcode readAllLimited} when the input exceeds the limit. */
export class InputTooLargeError extends Error {
  /** Creates the error for a `maxBytes` limit. */
  constructor(maxBytes: number) {
    super(`larger than ${formatBytes(maxBytes)}`);
    this.name = "InputTooLargeError";
  }
}

/**
 * Reads `stream` to its end as UTF-8 text, cancelling it and throwing an
 * {@linkcode InputTooLargeError} as soon as more than `maxBytes` arrived.
 */
export async function readAllLimited(
  stream: ReadableStream<Uint8Array>,
  maxBytes: number,
): Promise<string> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.length;
      if (total > maxBytes) {
        await reader.cancel();
        throw new InputTooLargeError(maxBytes);
      }
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  return new TextDecoder().decode(concat(chunks, total));
}

/**
 * Splits `stream` into lines (without `\n` or `\r\n`), in time linear in the
 * input. A line longer than `maxLineBytes` is not buffered: the reader yields
 * `{ tooLong: maxLineBytes }` as soon as the limit is passed, then skips the
 * rest of that line. Breaking out of the loop cancels the stream.
 */
export async function* splitLines(
  stream: ReadableStream<Uint8Array>,
  maxLineBytes: number,
): AsyncGenerator<InputLine> {
  const decoder = new TextDecoder();
  // The current line's pieces; each chunk is scanned once, so splitting is linear.
  let pieces: Uint8Array[] = [];
  let length = 0;
  let skipping = false;
  const take = (last: Uint8Array, terminated: boolean): string => {
    pieces.push(last);
    const line = decoder.decode(concat(pieces, length + last.length));
    pieces = [];
    length = 0;
    return terminated && line.endsWith("\r") ? line.slice(0, -1) : line;
  };
  for await (const chunk of stream) {
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(0x0a, start);
      const end = nl === -1 ? chunk.length : nl;
      if (!skipping) {
        // A `\r` before the `\n` is not part of the line: it may take one byte more
        // (when the chunk ends on it, the `\n` may come with the next chunk).
        const last = end > start ? chunk[end - 1] : pieces.at(-1)?.at(-1);
        const cr = last === 0x0d ? 1 : 0;
        if (length + end - start > maxLineBytes + cr) {
          pieces = [];
          length = 0;
          skipping = true;
          yield { tooLong: maxLineBytes };
        } else if (nl !== -1) {
          yield take(chunk.subarray(start, end), true);
        } else {
          // The chunk may be a view on a buffer the stream reuses: keep a copy.
          pieces.push(chunk.slice(start, end));
          length += end - start;
        }
      }
      if (nl === -1) break;
      skipping = false;
      start = nl + 1;
    }
  }
  if (!skipping && length > 0) yield take(new Uint8Array(0), false);
}

function concat(chunks: readonly Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
