/**
 * Response bodies that give their request's seat back themselves. `apf()`
 * wraps a streamed body so that the seat goes back when it ends; a handler
 * that streams a body it already follows to its end (the gateway's reverse
 * proxy, whose body reads its upstream to the end even when the client
 * leaves) releases the seat there, and marks the body so that `apf()` does
 * not wrap it a second time: each layer of stream costs every chunk a trip
 * through JavaScript, and the response a second stream and `Response`.
 *
 * @module
 */

const releasing = new WeakSet<ReadableStream>();

/**
 * Marks `body` as one that releases its request's seat (`c.get("apf").seat`)
 * itself once it has ended, failed, or finished cancelling, whatever the
 * client does: `apf()` then leaves it as it is. The body must release the
 * seat on every one of those paths (a seat is released exactly once; later
 * calls do nothing).
 */
export function releasingSeat<T extends ReadableStream>(body: T): T {
  releasing.add(body);
  return body;
}

/** Whether `body` was marked by {@linkcode releasingSeat}. */
export function releasesItsSeat(body: ReadableStream | null): boolean {
  return body !== null && releasing.has(body);
}
