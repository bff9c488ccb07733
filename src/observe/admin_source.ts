/**
 * What the admin router reads: an {@linkcode AdminSource}. An `apf()`
 * middleware is one (its embedded coordinator), so is the coordinator
 * server (with its sessions and reload), and the Cloudflare adapter builds
 * one that gathers from every level object. Each reading may be a promise:
 * a source may ask other objects over RPC.
 *
 * @module
 */

import type { GradientSnapshot } from "../adaptive/types.ts";
import type { SnapshotOptions } from "../fairqueuing/types.ts";
import type { CoordinatorSnapshot, SessionsSnapshot } from "./types.ts";

/**
 * An answer a source gives instead of data: the HTTP status and the reason
 * the router answers with (for example 400 for a missing parameter, 504 for
 * an object that did not answer in time).
 */
export class AdminUnavailable {
  /** The HTTP status, 400 to 599. */
  readonly status: number;
  /** One line for the operator, without a trailing newline. */
  readonly reason: string;

  /**
   * An answer with `status` and `reason`.
   *
   * @param status The HTTP status, an integer from 400 to 599.
   * @param reason One line for the operator.
   * @throws {RangeError} when `status` is not an integer from 400 to 599.
   */
  constructor(status: number, reason: string) {
    if (!(Number.isInteger(status) && status >= 400 && status <= 599)) {
      throw new RangeError(
        `Cannot answer an admin request: status must be an integer from 400 to 599, got ${
          String(status)
        }`,
      );
    }
    this.status = status;
    this.reason = String(reason);
  }
}

/** What a source returns for a reading: the data, `null` (none here: 404), or a refusal. */
export type AdminReading<T> =
  | T
  | null
  | AdminUnavailable
  | Promise<T | null | AdminUnavailable>;

/**
 * Where the admin routes read from. `C` is what the caller passes along with
 * each request (for example a Hono `Context`, to read a Worker's bindings);
 * readings receive it last, and sources that need nothing ignore it.
 */
export interface AdminSource<C = void> {
  /**
   * The coordinator's state for the three Kubernetes dumps (with every
   * request when `options.includeRequests`), or `null` when it cannot tell.
   */
  snapshot(options: SnapshotOptions, context: C): AdminReading<CoordinatorSnapshot>;
  /** The metrics (`expose()` gives the Prometheus text), or `null` when there are none here. */
  readonly metrics: { expose(context: C): AdminReading<string> } | null;
  /**
   * The priority levels' names in the order requests are matched to them,
   * for the dashboard (without it: by name, the exempt level first).
   */
  levelOrder?(context: C): readonly string[];
  /**
   * The learned server concurrency limit's state
   * (`serverConcurrencyLimit: "auto"`), with its bounds (`min`, `max`) when
   * known: the admin routes add it to `dump_priority_levels` and to the
   * dashboard. `null` (or no such member) with a static limit, which shows
   * nothing more. An `apf()` middleware and the gateway's have it.
   */
  adaptiveSnapshot?(
    context: C,
  ): AdminReading<GradientSnapshot>;
  /**
   * The sessions of a coordinator server, for `dump_sessions` (the query
   * string may select, e.g. `?level=NAME`). Without it there is no such route.
   *
   * @internal
   */
  sessions?(query: URLSearchParams, context: C): AdminReading<SessionsSnapshot>;
  /**
   * Reads and applies the configuration again, for `POST /reload`. Without
   * it there is no such route. A refusal is a value, not an exception:
   * `applied: true` with a one-line summary of the changes, or
   * `applied: false` with the reason (nothing changed). `allowEmpty` is
   * `?allowEmpty=true`: apply a configuration without any user object even
   * over one with some.
   */
  reload?(
    options: { allowEmpty: boolean },
    context: C,
  ): Promise<{ applied: true; summary: string } | { applied: false; reason: string }>;
}
