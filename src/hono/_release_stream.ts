/**
 * A response whose seat goes back when its body has ended, failed or been
 * cancelled: a seat follows the work that makes the body, not the handler's
 * return (KEP-1040 keeps a request's seats until its handler is done; a
 * streamed body is part of that work).
 *
 * @module
 */

import type { ReleaseOptions, Seat } from "../coordinator/types.ts";
import { RELEASED_AS } from "../coordinator/release_outcome.ts";

/**
 * A copy of `response` whose body releases `seat` (with `ended`: how the
 * work ended, for a learned limit; with an `error` outcome when the body
 * fails) when it ends, fails or is cancelled by the client; a response
 * without a body releases it at once. On cancel, the seat goes back once
 * the body's own source has finished cancelling (the gateway's source reads
 * its upstream to the end first).
 */
export function releaseWhenBodyEnds(
  response: Response,
  seat: Seat,
  ended?: ReleaseOptions,
): Response {
  const body = response.body;
  if (body === null) {
    seat.release(ended);
    return response;
  }
  const reader = body.getReader();
  // A cancel ends the read pulling meanwhile as if the body had ended: that is not its end.
  let cancelling = false;
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (cancelling) return;
        if (done) {
          seat.release(ended);
          controller.close();
        } else {
          controller.enqueue(value);
        }
      } catch (e) {
        if (cancelling) return;
        // The body failed: the work ended in an error, whatever the status said.
        seat.release(RELEASED_AS.error);
        controller.error(e);
      }
    },
    cancel(reason) {
      cancelling = true;
      return reader.cancel(reason).finally(() => seat.release(ended));
    },
  });
  return new Response(stream, response);
}
