/**
 * The live dashboard's routes, under `/debug/api_priority_and_fairness/`:
 *
 * - `GET .../` the page (`GET ...` without the slash redirects to it), and
 *   its files `dashboard.js` and `dashboard.css`: static, from the package,
 *   under a strict Content-Security-Policy;
 * - `GET .../live` the data ({@linkcode LiveFrame}, JSON; `?history=1` adds
 *   the last minutes), sampled at most once a second whoever asks; with the
 *   learned server concurrency limit when the source's `adaptiveSnapshot()`
 *   gives one;
 * - `POST .../sign-in` (a form's `token`) and `POST .../sign-out`: keep the
 *   admin token in a cookie scoped to these paths (`HttpOnly`,
 *   `SameSite=Strict`), for a browser that cannot send an `Authorization`
 *   header. They read nothing and decide nothing: the page and its data
 *   still ask `authorize` (see `bearerTokenCheck`), and a cross-site form
 *   cannot set the cookie.
 *
 * The page, its files and its data ask `authorize` like every admin route;
 * a browser refused the page gets a sign-in form (with 403).
 *
 * @module
 */

import { AdminUnavailable } from "./admin_source.ts";
import type { AdminReading, AdminSource } from "./admin_source.ts";
import { DASHBOARD_CSP, dashboardHtml, SIGN_IN_HTML, signInHtml } from "./_dashboard_page.ts";
import { DASHBOARD_JS } from "./_dashboard_script.ts";
import { DASHBOARD_CSS } from "./_dashboard_style.ts";
import { LiveView, type LiveViewOptions } from "./live_view.ts";
import { ADMIN_TOKEN_COOKIE } from "./bearer_token.ts";

/** The live dashboard's path (with its trailing slash), under wherever the admin routes are mounted. */
export const DASHBOARD_PATH = "/debug/api_priority_and_fairness/";

/** One admin route as the router builds it (see `admin_router.ts`). */
interface Route<C> {
  readonly method: "GET" | "POST";
  readonly path: string;
  handle(request: Request, context: C): Promise<Response>;
}

/** How the router builds a route: authorized (a refusal answers `forbidden()` or 403), or `open`. */
export type RouteMaker<C> = (
  method: "GET" | "POST",
  path: string,
  answer: (request: Request, url: URL, context: C) => Promise<Response>,
  options?: { open?: boolean; forbidden?: (request: Request) => Response },
) => Route<C>;

/** How the router reads a source (bounded by its timeout). */
export type Reader = <T>(reading: AdminReading<T>) => Promise<T | null | AdminUnavailable>;

const SECURITY_HEADERS = {
  "Content-Security-Policy": DASHBOARD_CSP,
  "X-Content-Type-Options": "nosniff",
  // Not `no-referrer`: under it a browser sends the sign-in form's POST with `Origin: null`,
  // and over plain HTTP to a host that is not loopback (no `Sec-Fetch-Site` there) `sameOrigin`
  // could not tell it from a cross-site form. `same-origin` sends the Origin to the dashboard
  // itself and nothing to anyone else (Fetch standard, "serializing a request origin").
  "Referrer-Policy": "same-origin",
  "Cache-Control": "no-store",
};

function file(body: string, type: string, status = 200, extra: HeadersInit = {}): Response {
  return new Response(body, {
    status,
    headers: { "Content-Type": type, ...SECURITY_HEADERS, ...extra },
  });
}

const html = (body: string, status = 200) => file(body, "text/html; charset=UTF-8", status);

/** True when the request comes from a page of the same origin (or straight from the user). */
function sameOrigin(request: Request, url: URL): boolean {
  const site = request.headers.get("Sec-Fetch-Site");
  if (site !== null) return site === "same-origin" || site === "none";
  const origin = request.headers.get("Origin");
  return origin === null || origin === url.origin;
}

/** Whether `request` carries a sign-in cookie with a value. */
function signedIn(request: Request): boolean {
  const cookies = request.headers.get("Cookie") ?? "";
  return cookies.split(";").some((c) => {
    const [name, value] = c.trim().split("=", 2);
    return name === ADMIN_TOKEN_COOKIE && value !== undefined && value !== "";
  });
}

/** The cookie's attributes: these paths only, never sent cross-site, never read by a script. */
function cookieAttributes(url: URL): string {
  const path = url.pathname.slice(0, url.pathname.lastIndexOf("/") + 1);
  const secure = url.protocol === "https:" ? "; Secure" : "";
  return `Path=${path}; HttpOnly; SameSite=Strict${secure}`;
}

/** The dashboard's routes over `source`. */
export function dashboardRoutes<C>(
  source: AdminSource<C>,
  route: RouteMaker<C>,
  read: Reader,
  options: LiveViewOptions = {},
): Route<C>[] {
  const view = new LiveView(options);
  const prefix = DASHBOARD_PATH;
  return [
    route("GET", prefix.slice(0, -1), (_request, url) => {
      const to = `${url.pathname}/${url.search}`;
      return Promise.resolve(new Response(null, { status: 308, headers: { Location: to } }));
    }, { open: true }),
    // Signed in with the cookie: the page offers to sign out (not to one who sent a header).
    route("GET", prefix, (request) => Promise.resolve(html(dashboardHtml(signedIn(request)))), {
      // Refused with the sign-in cookie: the token signed in with is not the one.
      forbidden: (request) => html(signInHtml(signedIn(request)), 403),
    }),
    route(
      "GET",
      `${prefix}dashboard.js`,
      () => Promise.resolve(file(DASHBOARD_JS, "text/javascript; charset=UTF-8")),
    ),
    route(
      "GET",
      `${prefix}dashboard.css`,
      () => Promise.resolve(file(DASHBOARD_CSS, "text/css; charset=UTF-8")),
    ),
    route("GET", `${prefix}live`, async (_request, url, context) => {
      let refusal: AdminUnavailable | null = null;
      const frame = await view.frame({
        snapshot: async () => {
          const snapshot = await read(source.snapshot({ includeRequests: true }, context));
          if (snapshot instanceof AdminUnavailable) refusal = snapshot;
          return snapshot instanceof AdminUnavailable ? null : snapshot;
        },
        metrics: async () => {
          if (source.metrics === null) return null;
          const text = await read(source.metrics.expose(context));
          return typeof text === "string" ? text : null;
        },
        levelOrder: () => source.levelOrder?.(context) ?? [],
        adaptive: async () => {
          const reading = source.adaptiveSnapshot?.(context);
          if (reading === undefined) return null;
          const state = await read(reading);
          // A refusal of this reading leaves the limit out of the frame, not the frame.
          return state instanceof AdminUnavailable ? null : state;
        },
      }, { history: url.searchParams.get("history") === "1" });
      if (frame === null) {
        const r = refusal as AdminUnavailable | null;
        return r === null
          ? file(
            "No live view here: the coordinator is remote.\n",
            "text/plain; charset=UTF-8",
            404,
          )
          : file(`${r.reason}\n`, "text/plain; charset=UTF-8", r.status);
      }
      return file(JSON.stringify(frame), "application/json");
    }),
    route("POST", `${prefix}sign-in`, async (request, url) => {
      if (!sameOrigin(request, url)) return html(SIGN_IN_HTML, 403);
      let token = "";
      try {
        const form = await request.formData();
        token = String(form.get("token") ?? "");
      } catch {
        // Not a form: treated as an empty token.
      }
      if (token === "" || /[\s;,"\\]/.test(token) || token.length > 4096) {
        return html(SIGN_IN_HTML, 400);
      }
      return new Response(null, {
        status: 303,
        headers: {
          Location: "./",
          "Set-Cookie": `${ADMIN_TOKEN_COOKIE}=${encodeURIComponent(token)}; ${
            cookieAttributes(url)
          }; Max-Age=28800`,
          "Cache-Control": "no-store",
        },
      });
    }, { open: true }),
    route("POST", `${prefix}sign-out`, (request, url) => {
      if (!sameOrigin(request, url)) return Promise.resolve(html(SIGN_IN_HTML, 403));
      return Promise.resolve(
        new Response(null, {
          status: 303,
          headers: {
            Location: "./",
            "Set-Cookie": `${ADMIN_TOKEN_COOKIE}=; ${cookieAttributes(url)}; Max-Age=0`,
            "Cache-Control": "no-store",
          },
        }),
      );
    }, { open: true }),
  ];
}
