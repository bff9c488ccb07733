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
 * The cookie the dashboard's sign-in form keeps the admin token in, for a
 * browser that cannot send an `Authorization` header.
 */
export const ADMIN_TOKEN_COOKIE = "apf_admin_token";

/**
 * An `authorize` for `adminRouter()` that lets in the requests
 * carrying `Authorization: Bearer <token>` (compared in constant time), and
 * the `GET` and `HEAD` requests of a browser that signed in on the
 * dashboard (the token in the `apf_admin_token` cookie, which is
 * `HttpOnly`, `SameSite=Strict` and scoped to the dashboard's paths; a
 * `POST` such as `/reload` needs the header). It fails closed: a missing,
 * empty or short token (an unset environment variable) throws here, when
 * the routes are created, instead of letting in `Bearer undefined`.
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
  return (request) => {
    const header = request.headers.get("Authorization");
    if (header !== null) return constantTimeEqual(header, expected);
    if (request.method !== "GET" && request.method !== "HEAD") return false;
    const cookie = cookieValue(request.headers.get("Cookie"), ADMIN_TOKEN_COOKIE);
    return cookie !== null && constantTimeEqual(cookie, token);
  };
}

/** The value of cookie `name` in a `Cookie` header (URL-decoded), or `null`. */
function cookieValue(header: string | null, name: string): string | null {
  if (header === null) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    try {
      return decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      return null;
    }
  }
  return null;
}
