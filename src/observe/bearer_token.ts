/**
 * The fail-closed bearer-token check of the admin routes: a missing or
 * short token is a startup error, never an open door.
 *
 * @module
 */

import { constantTimeEqual } from "../_shared/secrets.ts";

/** The shortest admin token {@linkcode bearerTokenCheck} accepts. */
export const MIN_ADMIN_TOKEN_LENGTH = 16;

/**
 * An `authorize` for `adminRouter()` that lets in the requests
 * carrying `Authorization: Bearer <token>` (compared in constant time). It
 * fails closed: a missing, empty or short token (an unset environment
 * variable) throws here, when the routes are created, instead of letting in
 * `Bearer undefined`.
 *
 * @param token The secret, 16 characters or more.
 * @returns A check of a request's `Authorization` header.
 * @throws {TypeError} when `token` is not a string of 16 characters or more.
 * @example
 * ```ts
 * import { bearerTokenCheck } from "@apf/edge";
 * const check = bearerTokenCheck("0123456789abcdef-example");
 * check(new Request("http://localhost/metrics", {
 *   headers: { Authorization: "Bearer 0123456789abcdef-example" },
 * })); // true
 * ```
 */
export function bearerTokenCheck(token: string | null | undefined): (request: Request) => boolean {
  if (typeof token !== "string" || token.length < MIN_ADMIN_TOKEN_LENGTH) {
    throw new TypeError(
      `Cannot authorize the admin routes: the token must be a string of ${MIN_ADMIN_TOKEN_LENGTH} characters or more, got ${
        typeof token === "string" ? `${token.length} characters` : String(token)
      }`,
    );
  }
  const expected = `Bearer ${token}`;
  return (request) => constantTimeEqual(request.headers.get("Authorization") ?? "", expected);
}
