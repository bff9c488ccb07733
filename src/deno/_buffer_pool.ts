/**
 * Buffers of one size, lent for a write and given back once it is done,
 * so that a connection holds no output buffer between its responses.
 *
 * Held per connection, a 16 KiB output buffer was a third of what an idle
 * keep-alive connection of the gateway cost (about 48 KB each, against
 * 0.5 KB for nginx: `bench/RESULTS.md`, "memory per idle connection").
 * Lent from here, there are as many as writes in flight, and the few kept
 * free are the ones the next responses use.
 *
 * A buffer must not be given back before the write that reads it has
 * settled: Deno's write keeps the buffer until then.
 *
 * @module
 */

/** A pool of buffers of `size` bytes that keeps at most `keep` of them free. */
export class BufferPool {
  readonly size: number;
  readonly #keep: number;
  readonly #free: Uint8Array[] = [];

  constructor(size: number, keep: number) {
    this.size = size;
    this.#keep = keep;
  }

  /** A buffer of `size` bytes, lent until {@linkcode give} takes it back. */
  take(): Uint8Array {
    return this.#free.pop() ?? new Uint8Array(this.size);
  }

  /** Takes back a buffer {@linkcode take} lent (kept for the next, or left to the collector). */
  give(buffer: Uint8Array): void {
    if (this.#free.length < this.#keep) this.#free.push(buffer);
  }

  /** Buffers free now. */
  get free(): number {
    return this.#free.length;
  }
}
