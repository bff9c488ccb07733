/**
 * Whether a response's body is already complete when the handler returns
 * it: its seat can then go back at once. A streamed body is still being
 * made by the work the seat guards, so its seat waits for the body's end.
 *
 * @module
 */

/**
 * The Fetch standard's body is a (stream, source, length) tuple whose
 * source is the value the body was made from (a string, bytes, a Blob,
 * form data) or null for a stream (https://fetch.spec.whatwg.org/#concept-body).
 * Deno and Node's undici keep the response's internal state, body tuple
 * included, under an own symbol, found here once on a probe. Reading it
 * costs three property loads; reading `response.body` instead would make
 * the runtime build a stream for every response (in Deno about 1 µs more,
 * and the slower path to the socket). Found on first use: Workers refuse
 * to make a Response at module scope.
 */
let stateKey: symbol | null | undefined;

interface BodyState {
  body: { source: unknown } | null;
}

function findStateKey(): symbol | null {
  const text = "\u0000apf-probe";
  // With headers: Deno keeps a bare `new Response(text)` aside, with no body tuple yet.
  const probe = new Response(text, { headers: { "x-apf": "probe" } }) as unknown as Record<
    symbol,
    unknown
  >;
  for (const key of Object.getOwnPropertySymbols(probe)) {
    const value = probe[key] as Partial<BodyState> | null;
    if (typeof value === "object" && value !== null && value.body?.source === text) return key;
  }
  return null;
}

/**
 * True when `response` has no body or one made from a value given whole
 * (a string, bytes, a Blob, form data); false for a stream, whose end is
 * known only by reading it. Where the runtime keeps no such state (not
 * Deno, not Node), only a missing body counts as complete: correct, at the
 * cost of wrapping every other body.
 */
export function bodyIsComplete(response: Response): boolean {
  if (stateKey === undefined) stateKey = findStateKey();
  if (stateKey !== null) {
    const state = (response as unknown as Record<symbol, BodyState | undefined>)[stateKey];
    if (state !== undefined) {
      // No tuple yet: no body, or (Deno) a string kept aside until the headers change.
      const body = state.body;
      return body === null || (body.source !== null && body.source !== undefined);
    }
  }
  return response.body === null;
}
