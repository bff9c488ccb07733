/**
 * Static per-route costs for ordinary HTTP APIs: an export endpoint is wider
 * than a health check, whatever Kubernetes' verb rules would say. Routes are
 * tried in order, before a fallback estimator.
 *
 * @module
 */

import { show } from "../_shared/show.ts";
import { kubernetesEstimator } from "./kubernetes.ts";
import { type PatternSegment, RouteTrie, type TrieEntry } from "./_route_trie.ts";
import type { EstimateInput, ResolvedWorkEstimate, WorkEstimator } from "./types.ts";

/** The cost of the requests matching a route. */
export interface RouteCost {
  /**
   * HTTP method or methods, in any case (compared upper-cased with the
   * request's `method`, which is upper case); default: any method.
   */
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

interface CompiledRouteCost extends TrieEntry {
  segments: readonly PatternSegment[];
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
  const trie = new RouteTrie<CompiledRouteCost>();
  for (const route of compiled) trie.add(route.segments, route);

  return function routeCost(input: EstimateInput): ResolvedWorkEstimate {
    const route = trie.find(input.method, input.requestInfo.path);
    return route === undefined ? otherwise(input) : cost(route, input.maxSeats);
  };
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
  const parts = pattern === "/" ? [] : pattern.slice(1).split("/");
  const segments = parts.map((segment, i): PatternSegment => {
    const bad = (why: string): never => {
      throw new TypeError(`Cannot ${WHAT}: ${at}.pattern ${show(pattern)}: ${why}`);
    };
    if (segment === "") bad(`segment ${i + 1} is empty`);
    if (segment === "*") {
      if (i !== parts.length - 1) bad(`"*" must be the last segment`);
      return "wildcard";
    }
    if (segment.startsWith(":")) {
      if (segment.length === 1) bad(`parameter ${i + 1} has no name`);
      return "param";
    }
    if (segment.includes("*")) bad(`"*" must be a whole segment, got ${show(segment)}`);
    return { literal: segment };
  });
  return {
    index,
    methods: compileMethods(at, route.method),
    segments,
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
