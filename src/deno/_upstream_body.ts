/**
 * The upstream's response body as the gateway passes it on. The seat
 * follows the upstream (`docs/semantics.md` §11.2): it goes back once the
 * body has ended or failed, and a client that leaves does not end it: the
 * rest is read and dropped until the upstream ends it or the deadline
 * passes.
 *
 * What it costs: a body passed on as a stream goes through JavaScript chunk
 * by chunk, which on Deno halves a small proxy's throughput
 * (`bench/RESULTS.md`); a body in hand (bytes) goes out in one piece. So a
 * body whose bytes have all arrived already (a `Content-Length` of at most
 * 64 KiB, every byte of it there and the end seen before the event loop
 * polls for I/O again) is passed on whole: nothing waits for bytes that are not
 * there, so nothing is buffered; any other body is streamed as it comes.
 *
 * @module
 */

import type { ReleaseOptions, Seat } from "../coordinator/types.ts";
import { RELEASED_AS } from "../coordinator/release_outcome.ts";
import { releasingSeat } from "../hono/seat_body.ts";

/** Bodies up to this many bytes may be passed on whole. */
export const WHOLE_BODY_LIMIT = 64 * 1024;

/** Reads of a body of unknown length take up to this many bytes (Deno's own chunk size). */
const CHUNK = 64 * 1024;

/** What the stream needs of the upstream deadline. */
export interface BodyDeadline {
  /** Watches the deadline again; resolves once it passed (aborting the upstream) or was cancelled. */
  resume(): Promise<void>;
  /** Stops watching it for good. */
  cancel(): void;
  /** Whether it passed (and aborted the upstream call). */
  readonly passed: boolean;
}

/**
 * The upstream's response body failed before its end (the connection
 * closed or reset mid-body, or its framing broke): the stream the client
 * reads fails with it, and `onFailure` has been told.
 */
export class UpstreamBodyFailed extends Error {
  /** `"UpstreamBodyFailed"`. */
  override name = "UpstreamBodyFailed";
  /**
   * Creates the error.
   *
   * @param cause Why the body failed (the upstream client's error).
   */
  constructor(cause: unknown) {
    super("the upstream's response body failed before its end", { cause });
  }
}

/** What the body stream does besides passing the bytes on. */
export interface UpstreamBodyOptions {
  /** The seat the body gives back once it ends or fails (none: the caller's affair). */
  seat?: Seat | undefined;
  /** How the upstream's work ended, stated with the release when the body ends (a learned limit). */
  releasedAs?: ReleaseOptions | undefined;
  /** Told when the upstream fails mid-body, before the client's stream fails. */
  onFailure?: ((error: UpstreamBodyFailed) => void) | undefined;
}

const NOT_YET = Symbol("not yet");

/**
 * Resolves once the event loop has polled for I/O again (`setImmediate`:
 * after this turn's I/O, about a microsecond; `setTimeout(0)` would wait a
 * millisecond). Shared by all who ask in the same turn. A matter of order,
 * not of time: no clock is read.
 */
let nextTurn: Promise<typeof NOT_YET> | null = null;
function turn(): Promise<typeof NOT_YET> {
  return nextTurn ??= new Promise((resolve) => {
    setImmediate(() => {
      nextTurn = null;
      resolve(NOT_YET);
    });
  });
}

/** A read under way, or done. */
type Read = Promise<ReadableStreamReadResult<Uint8Array>>;

/**
 * The body to answer with: the bytes when they are all in hand (see the
 * module's documentation), else a stream of the body that gives
 * `options.seat` back itself (marked for `apf()`). `contentLength` is the
 * upstream's `Content-Length` (`null` when absent or invalid).
 *
 * @throws {UpstreamBodyFailed} when the body fails before the answer is
 * made (`options.onFailure` told, the seat not released): nothing of it has
 * gone out, so the caller answers 502 and releases the seat.
 */
export async function upstreamBody(
  body: ReadableStream<Uint8Array> | null,
  contentLength: number | null,
  deadline: BodyDeadline,
  options: UpstreamBodyOptions = {},
): Promise<Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array> | null> {
  if (body === null) return null;
  let reader: ReadableStreamBYOBReader;
  try {
    reader = body.getReader({ mode: "byob" });
  } catch {
    // Not a byte stream (not Deno's fetch): stream it through a default reader.
    return streamed(body.getReader(), null, contentLength, deadline, options);
  }
  if (contentLength === null || contentLength > WHOLE_BODY_LIMIT) {
    return streamed(reader, null, contentLength, deadline, options);
  }
  try {
    // One byte more than announced: a body longer than its Content-Length is not whole.
    const first: Read = reader.read(new Uint8Array(contentLength + 1));
    const got = await Promise.race([first, turn()]);
    if (got === NOT_YET || got.done || got.value.byteLength !== contentLength) {
      return streamed(reader, first, contentLength, deadline, options);
    }
    const end: Read = reader.read(new Uint8Array(1));
    const ended = await Promise.race([end, turn()]);
    if (ended === NOT_YET || !ended.done) {
      return streamed(reader, end, contentLength, deadline, options, got.value);
    }
    // The buffer was made here: a plain ArrayBuffer.
    return got.value as Uint8Array<ArrayBuffer>;
  } catch (e) {
    // Failed before any of it was passed on: the caller answers 502 instead, and releases the seat.
    const failure = new UpstreamBodyFailed(e);
    options.onFailure?.(failure);
    throw failure;
  }
}

/**
 * The body as a stream: `pending` (a read under way) and `head` (bytes read
 * already) come first. Reads take what is left of `contentLength` (plus
 * one, to see the end), else {@linkcode CHUNK} bytes.
 */
function streamed(
  reader: ReadableStreamBYOBReader | ReadableStreamDefaultReader<Uint8Array>,
  pending: Read | null,
  contentLength: number | null,
  deadline: BodyDeadline,
  options: UpstreamBodyOptions,
  head?: Uint8Array,
): ReadableStream<Uint8Array> {
  const { seat, releasedAs, onFailure } = options;
  let left = contentLength ?? Infinity;
  const read = (): Read => {
    if (pending !== null) {
      const p = pending;
      pending = null;
      return p;
    }
    if (!(reader instanceof ReadableStreamBYOBReader)) return reader.read();
    return reader.read(new Uint8Array(left < CHUNK ? left + 1 : CHUNK));
  };
  // A cancel owns the end: a read pulling meanwhile must not close, fail or release.
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      if (head !== undefined) {
        left -= head.byteLength;
        controller.enqueue(head);
      }
    },
    async pull(controller) {
      let result: ReadableStreamReadResult<Uint8Array>;
      try {
        result = await read();
      } catch (e) {
        if (cancelled) return;
        // The upstream failed mid-body: whatever its status said, its work ended in an error.
        seat?.release(RELEASED_AS.error);
        const failure = new UpstreamBodyFailed(e);
        onFailure?.(failure);
        throw failure;
      }
      if (cancelled) return;
      if (result.done) {
        seat?.release(releasedAs);
        controller.close();
      } else {
        left -= result.value.byteLength;
        controller.enqueue(result.value);
      }
    },
    async cancel() {
      cancelled = true;
      const timedOut = deadline.resume().then(() => reader.cancel());
      let failed = false;
      try {
        while (!(await read()).done) {
          // Dropped: the client is gone.
        }
      } catch {
        // The upstream failed, or the deadline aborted it: either way it is over.
        failed = true;
      } finally {
        // Not as its status said when the deadline cut it (a cancel ends the read as done, an
        // abort fails it) or the upstream failed it.
        const ended = deadline.passed
          ? RELEASED_AS.timeout
          : failed
          ? RELEASED_AS.error
          : releasedAs;
        deadline.cancel();
        await timedOut.catch(() => {});
        seat?.release(ended);
      }
    },
  });
  return seat === undefined ? stream : releasingSeat(stream);
}
