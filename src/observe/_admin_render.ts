/**
 * The admin router's dump responses: Kubernetes' column format, or JSON
 * with `?format=json`; `dump_priority_levels` in the column format ends
 * with the learned limit's line when one is in force (`dumps.ts`).
 *
 * @module
 */

import {
  dumpPriorityLevels,
  dumpPriorityLevelsJson,
  dumpQueues,
  dumpQueuesJson,
  dumpRequests,
  dumpRequestsJson,
} from "./dumps.ts";
import { dumpSessions, dumpSessionsJson } from "./session_dumps.ts";
import type { CoordinatorSnapshot, LearnedLimitSnapshot, SessionsSnapshot } from "./types.ts";

/**
 * A dump response; `query` selects the format and, for `dump_requests`, the
 * details; `learnedLimit` is the learned server concurrency limit in force, if any.
 */
export function renderDump(
  kind: "dump_priority_levels" | "dump_queues" | "dump_requests",
  snapshot: CoordinatorSnapshot,
  query: URLSearchParams,
  learnedLimit?: LearnedLimitSnapshot | null,
): Response;
export function renderDump(
  kind: "dump_sessions",
  snapshot: SessionsSnapshot,
  query: URLSearchParams,
): Response;
export function renderDump(
  kind: string,
  snapshot: CoordinatorSnapshot | SessionsSnapshot,
  query: URLSearchParams,
  learnedLimit: LearnedLimitSnapshot | null = null,
): Response {
  const json = query.get("format") === "json";
  // Kubernetes: any non-empty `includeRequestDetails` adds the columns.
  const includeRequestDetails = (query.get("includeRequestDetails") ?? "") !== "";
  const s = snapshot as CoordinatorSnapshot;
  switch (kind) {
    case "dump_priority_levels":
      return json
        ? jsonResponse(dumpPriorityLevelsJson(s))
        : text(dumpPriorityLevels(s, { learnedLimit }));
    case "dump_queues":
      return json ? jsonResponse(dumpQueuesJson(s)) : text(dumpQueues(s));
    case "dump_requests":
      return json
        ? jsonResponse(dumpRequestsJson(s, { includeRequestDetails }))
        : text(dumpRequests(s, { includeRequestDetails }));
    default: {
      const sessions = snapshot as SessionsSnapshot;
      return json ? jsonResponse(dumpSessionsJson(sessions)) : text(dumpSessions(sessions));
    }
  }
}

function text(body: string): Response {
  return new Response(body, { headers: { "Content-Type": "text/plain; charset=UTF-8" } });
}

function jsonResponse(value: unknown): Response {
  return new Response(JSON.stringify(value), {
    headers: { "Content-Type": "application/json" },
  });
}
