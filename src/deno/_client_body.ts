/**
 * A client's request body as the reverse proxy (`_proxy.ts`, on
 * `Deno.serve`) sends it upstream, watched for its own failure. When the
 * client's body cannot be read to its end (its chunked framing is invalid,
 * or its connection broke), `fetch` fails the whole exchange with the same
 * `TypeError` as an upstream that cannot be reached. The failure is the
 * client's, not the upstream's (RFC 9110 §15.5.1: invalid request message
 * framing is a `400`); the proxy tells the two apart by
 * {@linkcode WatchedBody.failed}. The gateway's own HTTP/1.1 server reads
 * request bodies itself and knows this without a watch.
 *
 * @module
 */

/** A body that passes the client's chunks on as they are read, one at a time. */
export class WatchedBody {
  /** What `fetch` reads: the client's chunks, pulled on demand (no read ahead). */
  readonly stream: ReadableStream<Uint8Array>;
  #failed = false;

  constructor(source: ReadableStream<Uint8Array>) {
    const reader = source.getReader();
    this.stream = new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        let step;
        try {
          step = await reader.read();
        } catch (e) {
          this.#failed = true;
          throw e;
        }
        if (step.done) controller.close();
        else controller.enqueue(step.value);
      },
      // The upstream side gave up (its failure, the deadline): stop reading the client.
      cancel: (reason) => reader.cancel(reason),
    }, { highWaterMark: 0 });
  }

  /** Whether reading the client's body failed. */
  get failed(): boolean {
    return this.#failed;
  }
}
