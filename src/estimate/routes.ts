/**
 * Static per-route costs for ordinary HTTP APIs: an export endpoint is wider
 * than a health check, whatever Kubernetes' verb rules would say. Routes are
 * tried in order, before a fallback estimator.
 *
 * @module
 */

import { show } from "../classify/_path_segments.ts";
import { kubernetesEstimator } from "./kubernetes.ts";
import type { EstimateInput, ResolvedWorkEstimate, WorkEstimator } from "./types.ts";

/** The cost of the requests matching a route. */
export interface RouteCost {
  /** HTTP method or methods (case-insensitive); default: any. */
  method?: string | readonly string[];
  /**
   * Path pattern: `/`-separated literal segments, `:param` segments (one
   * non-empty segment), and an optional last `*` (the rest of the path after
   * the slash, possibly empty: `/files/*` matches `/files/` and `/files/a/b`,
   * not `/files`). Matched against the percent-decoded path
   * (`requestInfo.path`), case-sensitively; `/` matches only the root.
   */
  pattern: string;
  /** Seats held while executing (integer ≥ 1); default 1. */
  seats?: number;
  /** Seats held after executing, for `additionalLatencyMs` (integer ≥ 0); default 0. */
  finalSeats?: number;
  /** How long the final seats are held, in ms (finite, ≥ 0); default 0. */
  additionalLatencyMs?: number;
}

const WILDCARD = -1;
const PARAM = -2;

interface CompiledRouteCost {
  /** Upper-case methods, or undefined for any. */
  methods: ReadonlySet<string> | undefined;
  /** Literal segment text, or "" for a parameter or the wildcard. */
  literals: readonly string[];
  /** Per segment: PARAM, WILDCARD, or 0 for a literal. */
  kinds: readonly number[];
  seats: number;
  finalSeats: number;
  additionalLatencyMs: number;
}

const WHAT = "create route cost estimator";

/**
 * Creates an estimator that gives the requests matching a route its static
 * cost, and asks `fallback` about the others (default: Kubernetes' estimator
 * with default options, which gives requests outside a Kubernetes API one
 * seat). The first matching route wins.
 *
 * Like Kubernetes' estimators, a route's cost is capped by the level's
 * `maxSeats` when it has one (`maxSeats > 0`): initial and final seats are
 * lowered to it, and the additional latency grows so that the final work
 * (final seats × latency) stays the same.
 *
 * @example
 * ```ts
 * import { describeRequest, routeCostEstimator } from "@apf/edge";
 *
 * const estimate = routeCostEstimator([
 *   { method: "POST", pattern: "/v1/reports/:id/export", seats: 8 },
 *   { pattern: "/v1/search/*", seats: 3 },
 * ]);
 * const work = estimate({
 *   requestInfo: describeRequest("POST", "/v1/reports/42/export"),
 *   method: "POST",
 *   flowSchema: "global-default",
 *   priorityLevel: "global-default",
 *   maxSeats: 0,
 * });
 * work.initialSeats; // 8
 * ```
 *
 * @throws {TypeError} when `routes` is not an array, a route or field has the wrong type, or a
 * pattern is malformed.
 * @throws {RangeError} when seats, final seats or latency are out of range.
 */
export function routeCostEstimator(
  routes: readonly RouteCost[],
  fallback?: WorkEstimator,
): WorkEstimator {
  if (!Array.isArray(routes)) {
    throw new TypeError(`Cannot ${WHAT}: routes must be an array, got ${show(routes)}`);
  }
  if (fallback !== undefined && typeof fallback !== "function") {
    throw new TypeError(`Cannot ${WHAT}: fallback must be a function, got ${show(fallback)}`);
  }
  const compiled = routes.map(compileRouteCost);
  const otherwise = fallback ?? kubernetesEstimator();
  // Routes by first literal segment, each list merged in order with the routes whose first
  // segment is not a literal: a request scans only the routes that can match its first segment.
  const generic = compiled.filter((r) => r.kinds[0] !== 0);
  const byFirst = new Map<string, CompiledRouteCost[]>();
  for (const r of compiled) {
    const first = r.kinds[0] === 0 ? r.literals[0]! : undefined;
    if (first !== undefined && !byFirst.has(first)) {
      byFirst.set(first, compiled.filter((s) => s.kinds[0] !== 0 || s.literals[0] === first));
    }
  }

  return function routeCost(input: EstimateInput): ResolvedWorkEstimate {
    const path = input.requestInfo.path;
    const from = path.charCodeAt(0) === 0x2f ? 1 : 0;
    let end = path.indexOf("/", from);
    if (end < 0) end = path.length;
    const candidates = byFirst.size === 0 ? generic : byFirst.get(path.slice(from, end)) ?? generic;
    for (const route of candidates) {
      if (route.methods !== undefined && !route.methods.has(input.method)) continue;
      if (matches(route, path, from)) return cost(route, input.maxSeats);
    }
    return otherwise(input);
  };
}

function matches(route: CompiledRouteCost, path: string, from: number): boolean {
  const { kinds, literals } = route;
  const n = kinds.length;
  // "/" (no segments) matches only the root.
  if (n === 0) return from >= path.length;
  let pos = from;
  for (let i = 0; i < n; i++) {
    // Past the end: the path has fewer segments (or lacks the slash before a wildcard).
    if (pos > path.length) return false;
    const kind = kinds[i]!;
    if (kind === WILDCARD) return true;
    let end = path.indexOf("/", pos);
    if (end < 0) end = path.length;
    if (kind === PARAM) {
      if (end === pos) return false;
    } else {
      const literal = literals[i]!;
      if (end - pos !== literal.length || !path.startsWith(literal, pos)) return false;
    }
    pos = end + 1;
  }
  return pos === path.length + 1;
}

function cost(route: CompiledRouteCost, maxSeats: number): ResolvedWorkEstimate {
  let { seats, finalSeats, additionalLatencyMs } = route;
  if (maxSeats > 0) {
    if (seats > maxSeats) seats = maxSeats;
    if (finalSeats > maxSeats) {
      // Keep the final work: narrower, and longer.
      additionalLatencyMs = (finalSeats * additionalLatencyMs) / maxSeats;
      finalSeats = maxSeats;
    }
  }
  return { initialSeats: seats, finalSeats, additionalLatencyMs };
}

function compileRouteCost(route: RouteCost, index: number): CompiledRouteCost {
  const at = `routes[${index}]`;
  if (route === null || typeof route !== "object") {
    throw new TypeError(`Cannot ${WHAT}: ${at} must be an object, got ${show(route)}`);
  }
  const pattern: unknown = route.pattern;
  if (typeof pattern !== "string" || pattern.charCodeAt(0) !== 0x2f) {
    throw new TypeError(
      `Cannot ${WHAT}: ${at}.pattern must be a string starting with "/", got ${show(pattern)}`,
    );
  }
  const literals: string[] = [];
  const kinds: number[] = [];
  const segments = pattern === "/" ? [] : pattern.slice(1).split("/");
  segments.forEach((segment, i) => {
    const bad = (why: string): never => {
      throw new TypeError(`Cannot ${WHAT}: ${at}.pattern ${show(pattern)}: ${why}`);
    };
    if (segment === "") bad(`segment ${i + 1} is empty`);
    if (segment === "*") {
      if (i !== segments.length - 1) bad(`"*" must be the last segment`);
      kinds.push(WILDCARD);
      literals.push("");
    } else if (segment.startsWith(":")) {
      if (segment.length === 1) bad(`parameter ${i + 1} has no name`);
      kinds.push(PARAM);
      literals.push("");
    } else {
      if (segment.includes("*")) bad(`"*" must be a whole segment, got ${show(segment)}`);
      kinds.push(0);
      literals.push(segment);
    }
  });
  return {
    methods: compileMethods(at, route.method),
    literals,
    kinds,
    seats: integerAtLeast(at, "seats", route.seats, 1, 1),
    finalSeats: integerAtLeast(at, "finalSeats", route.finalSeats, 0, 0),
    additionalLatencyMs: latency(at, route.additionalLatencyMs),
  };
}

function compileMethods(
  at: string,
  method: string | readonly string[] | undefined,
): ReadonlySet<string> | undefined {
  if (method === undefined) return undefined;
  const list: readonly unknown[] = typeof method === "string" ? [method] : method;
  if (!Array.isArray(list) || list.length === 0) {
    throw new TypeError(
      `Cannot ${WHAT}: ${at}.method must be a method name or a non-empty array of them, got ${
        Array.isArray(method) ? JSON.stringify(method) : show(method)
      }`,
    );
  }
  return new Set(list.map((m, i) => {
    if (typeof m !== "string" || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(m)) {
      const where = typeof method === "string" ? `${at}.method` : `${at}.method[${i}]`;
      throw new TypeError(`Cannot ${WHAT}: ${where} must be an HTTP method name, got ${show(m)}`);
    }
    return m.toUpperCase();
  }));
}

function integerAtLeast(
  at: string,
  field: string,
  value: unknown,
  min: number,
  fallback: number,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number") {
    throw new TypeError(
      `Cannot ${WHAT}: ${at}.${field} must be an integer >= ${min}, got ${show(value)}`,
    );
  }
  if (!Number.isInteger(value) || value < min) {
    throw new RangeError(
      `Cannot ${WHAT}: ${at}.${field} must be an integer >= ${min}, got ${show(value)}`,
    );
  }
  return value;
}

function latency(at: string, value: unknown): number {
  if (value === undefined) return 0;
  if (typeof value !== "number") {
    throw new TypeError(
      `Cannot ${WHAT}: ${at}.additionalLatencyMs must be a finite number >= 0, got ${show(value)}`,
    );
  }
  if (!Number.isFinite(value) || value < 0) {
    throw new RangeError(
      `Cannot ${WHAT}: ${at}.additionalLatencyMs must be a finite number >= 0, got ${show(value)}`,
    );
  }
  return value;
}
