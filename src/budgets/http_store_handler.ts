/**
 * The server side of `http_store.ts`: any {@linkcode BudgetStore} served
 * over HTTP with conditional requests, as a portable handler (a `Request`
 * in, a `Response` out, `null` for a path outside its prefix) that a Deno
 * server, a Durable Object or a Worker mounts.
 *
 * @module
 */

import { parseLedger } from "./ledger_schema.ts";
import type { BudgetStore } from "./store.ts";

/** Options of {@linkcode budgetStoreHandler}. */
export interface BudgetStoreHandlerOptions {
  /** Whether the request may read and write (`false` answers 401). */
  authorize: (request: Request) => boolean | Promise<boolean>;
  /** The path the levels are under (default `/budgets`). */
  prefix?: string;
}

/** Largest ledger accepted, in bytes. */
export const MAX_LEDGER_BYTES = 1024 * 1024;

const json = (body: unknown, status = 200, headers: HeadersInit = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { "Content-Type": "application/json", ...headers },
  });

const text = (body: string, status: number, headers: HeadersInit = {}) =>
  new Response(`${body}\n`, {
    status,
    headers: { "Content-Type": "text/plain; charset=UTF-8", ...headers },
  });

/** `"abc"` (or `W/"abc"`) as `abc`; `null` when not one quoted tag. */
function entityTag(header: string): string | null {
  const m = /^\s*(?:W\/)?"([^"]*)"\s*$/.exec(header);
  return m === null ? null : m[1]!;
}

/**
 * Serves `store` under `options.prefix`: `GET` and `PUT` of one level's
 * ledger (see `http_store.ts`). Every request is authorized first.
 *
 * @throws {TypeError} when `options.authorize` is not a function.
 */
export function budgetStoreHandler(
  store: BudgetStore,
  options: BudgetStoreHandlerOptions,
): (request: Request) => Promise<Response> | null {
  if (typeof options?.authorize !== "function") {
    throw new TypeError(
      "Cannot serve the budget store: options.authorize must be a function (return true to allow everyone)",
    );
  }
  const prefix = (options.prefix ?? "/budgets").replace(/\/+$/, "");
  return (request) => {
    const path = new URL(request.url).pathname;
    if (!path.startsWith(`${prefix}/`)) return null;
    return serve(request, path.slice(prefix.length + 1));
  };

  async function serve(request: Request, segment: string): Promise<Response> {
    if (!(await options.authorize(request))) {
      await request.body?.cancel();
      return text("Unauthorized", 401, { "WWW-Authenticate": "Bearer" });
    }
    let level: string;
    try {
      level = decodeURIComponent(segment);
    } catch {
      level = "";
    }
    if (level === "" || segment.includes("/")) {
      await request.body?.cancel();
      return text("Not found: the path is <prefix>/<level>", 404);
    }
    if (request.method === "GET" || request.method === "HEAD") {
      const stored = await store.read(level);
      if (stored === null) return text(`No ledger for level ${JSON.stringify(level)}`, 404);
      return json(stored, 200, { ETag: `"${stored.version}"` });
    }
    if (request.method !== "PUT") {
      await request.body?.cancel();
      return text("Method not allowed", 405, { Allow: "GET, HEAD, PUT" });
    }
    const ifMatch = request.headers.get("If-Match");
    const ifNoneMatch = request.headers.get("If-None-Match");
    let expected: string | null;
    if (ifMatch !== null) {
      expected = entityTag(ifMatch);
      if (expected === null) {
        await request.body?.cancel();
        return text("If-Match must be one quoted version", 400);
      }
    } else if (ifNoneMatch?.trim() === "*") {
      expected = null;
    } else {
      await request.body?.cancel();
      return text('A write needs If-Match: "<version>" or If-None-Match: *', 428);
    }
    const length = Number(request.headers.get("Content-Length") ?? 0);
    if (length > MAX_LEDGER_BYTES) {
      await request.body?.cancel();
      return text(`A ledger is at most ${MAX_LEDGER_BYTES} bytes`, 413);
    }
    const body = await request.text();
    if (body.length > MAX_LEDGER_BYTES) {
      return text(`A ledger is at most ${MAX_LEDGER_BYTES} bytes`, 413);
    }
    let ledger;
    try {
      ledger = parseLedger(JSON.parse(body), `Level ${JSON.stringify(level)}`);
    } catch (e) {
      return text(e instanceof Error ? e.message : String(e), 400);
    }
    const written = await store.write(level, expected, ledger);
    return written ? new Response(null, { status: 204 }) : text("The version has changed", 412);
  }
}
