/**
 * The write side of a WebSocket client connection: frames queued during
 * one synchronous run leave in one write, writes never overlap, and a
 * write the connection takes only part of is completed. Internal to
 * `noDelayWebSocket`.
 *
 * @module
 */

import { writeAll } from "./_write_all.ts";

/** Frames to one connection, in order; `onError` is told once when a write fails. */
export class FrameWriter {
  #conn: Deno.Conn;
  #onError: () => void;
  #queue: Uint8Array[] = [];
  #flushing: Promise<void> | null = null;
  #stopped = false;

  constructor(conn: Deno.Conn, onError: () => void) {
    this.#conn = conn;
    this.#onError = onError;
  }

  /** Nothing queued or being written. */
  get idle(): boolean {
    return this.#flushing === null;
  }

  /** Queues `frame`; it is written a microtask later, with whatever else was queued by then. */
  push(frame: Uint8Array): void {
    if (this.#stopped) return;
    this.#queue.push(frame);
    this.#flushing ??= Promise.resolve().then(() => this.#flush());
  }

  /** Resolves once everything queued was written, or dropped by {@linkcode stop} or an error. */
  drained(): Promise<void> {
    return this.#flushing ?? Promise.resolve();
  }

  /** Drops what is queued and writes nothing more (the connection is being closed). */
  stop(): void {
    this.#stopped = true;
    this.#queue = [];
  }

  async #flush(): Promise<void> {
    try {
      while (this.#queue.length > 0 && !this.#stopped) {
        const frames = this.#queue;
        this.#queue = [];
        await writeAll(this.#conn, frames.length === 1 ? frames[0]! : concat(frames));
      }
    } catch {
      this.stop();
      this.#onError();
    } finally {
      this.#flushing = null;
    }
  }
}

function concat(parts: Uint8Array[]): Uint8Array {
  let length = 0;
  for (const p of parts) length += p.length;
  const out = new Uint8Array(length);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
