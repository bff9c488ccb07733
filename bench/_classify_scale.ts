/**
 * Workloads of the classification scale benchmarks (bench/classify_scale_bench.ts
 * and bench/classify_scale_compare.ts): the built-in configuration plus N
 * per-tenant FlowSchemas (tests/classify/_tenants.ts), a request near the
 * start and one near the end of matching order, and user sets of 10,000 and
 * 1,000,000 distinct users spread over the tenants, taken round-robin.
 */

import {
  type Classification,
  describeRequest,
  type EffectiveConfiguration,
  EmbeddedCoordinator,
  FakeEventClock,
  type RequestInfo,
  seatRequestFor,
  type UserInfo,
} from "../mod.ts";
import { tenantConfiguration, tenantName, tenantUser } from "../tests/classify/_tenants.ts";

/** What a classifier offers: the current one, or the one of an older checkout. */
export interface ClassifierLike {
  classify(user: UserInfo, requestInfo: RequestInfo): Classification;
}

/** The request every case classifies: a namespaced list, which every tenant schema accepts. */
export const REQUEST: RequestInfo = describeRequest(
  "GET",
  "/api/v1/namespaces/default/configmaps",
);

const configurations = new Map<number, EffectiveConfiguration>();

/** The built-in configuration plus `tenants` tenant FlowSchemas (memoised). */
export function configuration(tenants: number): EffectiveConfiguration {
  let c = configurations.get(tenants);
  if (c === undefined) configurations.set(tenants, c = tenantConfiguration(tenants));
  return c;
}

/** A user of the first tenant (near the start of matching order) or the last (near the end). */
export function userAt(tenants: number, where: "start" | "end"): UserInfo {
  return tenantUser(where === "start" ? 0 : tenants - 1);
}

/**
 * `count` distinct users, spread round-robin over the even (group-matched)
 * tenants of a configuration with `tenants` tenants; one groups array per
 * tenant, shared, so that the users themselves stay small.
 */
export function users(count: number, tenants: number): UserInfo[] {
  const groups = Array.from(
    { length: Math.ceil(tenants / 2) },
    (_, t) => [tenantName(2 * t), "system:authenticated"],
  );
  return Array.from({ length: count }, (_, i) => ({
    name: `user-${i}`,
    groups: groups[i % groups.length]!,
  }));
}

/** Classifies the same user again and again. */
export function classifyOne(c: ClassifierLike, user: UserInfo): (n: number) => void {
  c.classify(user, REQUEST); // warm the flow
  return (n) => {
    for (let i = 0; i < n; i++) c.classify(user, REQUEST);
  };
}

/** Classifies the users round-robin, carrying on where the last batch stopped. */
export function classifyRoundRobin(c: ClassifierLike, set: UserInfo[]): (n: number) => void {
  let next = 0;
  return (n) => {
    for (let i = 0; i < n; i++) {
      c.classify(set[next]!, REQUEST);
      if (++next === set.length) next = 0;
    }
  };
}

/**
 * Classifies the users round-robin, each request with a fresh copy of the
 * user's name, as a server sees it (a name parsed from a header or a token is
 * a new string every time, whose hash no map has computed yet).
 */
export function classifyRoundRobinFresh(c: ClassifierLike, set: UserInfo[]): (n: number) => void {
  let next = 0;
  return (n) => {
    for (let i = 0; i < n; i++) {
      const user = set[next]!;
      c.classify({ name: ` ${user.name}`.slice(1), groups: user.groups }, REQUEST);
      if (++next === set.length) next = 0;
    }
  };
}

/** Every coordinator made here, to close at the end. */
export const coordinators: EmbeddedCoordinator[] = [];

/**
 * Classifies, acquires a seat on an embedded coordinator (fake clock: no
 * real-time reads) and releases it, for the users round-robin.
 */
export function classifyAcquireRelease(
  c: ClassifierLike,
  effective: EffectiveConfiguration,
  set: UserInfo[],
): (n: number) => Promise<void> {
  const coordinator = new EmbeddedCoordinator(effective, { clock: new FakeEventClock() });
  coordinators.push(coordinator);
  let next = 0;
  return async (n) => {
    for (let i = 0; i < n; i++) {
      const a = await coordinator.acquire(seatRequestFor(c.classify(set[next]!, REQUEST)));
      if (!a.admitted) throw new Error(`Cannot bench: rejected (${a.reason})`);
      a.seat.release();
      if (++next === set.length) next = 0;
    }
  };
}

/** Heap growth, after forced collections, while `run` classifies (needs --expose-gc). */
export function heapGrowth(run: () => void): number | undefined {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) return undefined;
  gc();
  gc();
  const before = Deno.memoryUsage().heapUsed;
  run();
  gc();
  gc();
  return Deno.memoryUsage().heapUsed - before;
}
