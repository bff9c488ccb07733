/**
 * The decision `apf()` takes before a handler runs (identify, describe,
 * classify, estimate, ask for seats), for a server that does not run
 * requests through Hono: the gateway's own HTTP/1.1 data path
 * (`src/deno/_gateway_exchange.ts`). The middleware itself runs on it, so
 * there is one implementation; {@linkcode admissionOf} hands a
 * middleware's to such a server.
 *
 * @module
 */

import type { Classification } from "../classify/classifier.ts";
import type { UserInfo } from "../classify/identity.ts";
import type { RequestInfo } from "../classify/request_info.ts";
import type { AdmissionRejectReason } from "../coordinator/types.ts";
import type { ApfState } from "./types.ts";

/** Where a middleware keeps its {@linkcode Admission}. */
export const ADMISSION: unique symbol = Symbol("apf admission");

/** A request `apf()` answers itself, without running the handler. */
export class Refusal {
  /** 400 (a path that cannot be classified as served), 401 (identity), 429 (no seats). */
  readonly status: 400 | 401 | 429;
  /** The plain-text body of a 400 or a 401. */
  readonly message: string;
  /** The 429's: why, its Retry-After, and what was rejected. */
  readonly rejection: {
    readonly reason: AdmissionRejectReason;
    readonly retryAfterSeconds: number;
    readonly classification: Classification;
    readonly user: UserInfo;
    readonly requestInfo: RequestInfo;
  } | null;

  constructor(
    status: 400 | 401 | 429,
    message: string,
    rejection: Refusal["rejection"] = null,
  ) {
    this.status = status;
    this.message = message;
    this.rejection = rejection;
  }
}

/** What {@linkcode Admission.admit} decides: seats held (the state), or a refusal. */
export type AdmissionResult = ApfState | Refusal;

/** The middleware's decision, for a server of its own. */
export interface Admission {
  /**
   * Decides on a request: its `method`, its raw (still percent-encoded)
   * `path` and `query`. `raw` is what the identity resolver reads (its
   * headers) and whose `signal` tells that the client went away (read only
   * if the request has to wait); `context` is passed to the resolver.
   * Resolves at once (no promise) for a request decided at once.
   */
  admit(
    raw: Request,
    context: unknown,
    method: string,
    path: string,
    query: string,
  ): AdmissionResult | Promise<AdmissionResult>;
  /**
   * Whether a response of `contentType` to the admitted request gives its
   * seats back once its head is out (a watch or an event stream, as
   * Kubernetes does for watches), rather than when its body ends.
   */
  initializesEarly(state: ApfState, contentType: string | null): boolean;
}

/** The {@linkcode Admission} of an `apf()` middleware. */
export function admissionOf(middleware: object): Admission {
  const admission = (middleware as { [ADMISSION]?: Admission })[ADMISSION];
  if (admission === undefined) throw new TypeError("Cannot admit: not an apf() middleware");
  return admission;
}

export {
  FLOW_SCHEMA_UID_HEADER,
  PRIORITY_LEVEL_UID_HEADER,
  TOO_MANY_REQUESTS_BODY,
  tooManyRequestsFields,
} from "./_response.ts";
