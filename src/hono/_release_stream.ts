/**
 * Holding a long-running response's seats until its body ends (the
 * `holdLongRunningSeats` option of `apf()`).
 *
 * @module
 */

import type { Seat } from "../coordinator/types.ts";

/**
 * A copy of `response` whose body releases `seat` when it ends, fails or is
 * cancelled by the client; a response without a body releases it at once.
 */
export function releaseWhenBodyEnds(response: Response, seat: Seat): Response {
  const body = response.body;
  if (body === null) {
    seat.release();
    return response;
  }
  const reader = body.getReader();
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          seat.release();
          controller.close();
        } else {
          controller.enqueue(value);
        }
      } catch (e) {
        seat.release();
        controller.error(e);
      }
    },
    cancel(reason) {
      seat.release();
      return reader.cancel(reason);
    },
  });
  return new Response(stream, response);
}
