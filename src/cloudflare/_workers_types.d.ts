/**
 * Types of the `cloudflare:workers` module and of the workerd objects around Durable Objects,
 * written against Deno's own lib (its `Request`, `Response`, `WebSocket`) so that code meant
 * for workerd type-checks beside the rest of this library with `deno check`.
 *
 * Deno cannot load `cloudflare:workers` (workerd provides it at run time), and
 * `npm:@cloudflare/workers-types` does not help: it declares `Request`, `URLSearchParams`
 * and the other web globals again, which clash with Deno's, and Deno then types every name
 * imported from it as `any`. So a module importing `cloudflare:workers` names this file as the
 * import's types:
 *
 * ```ts ignore
 * // @ts-types="./_workers_types.d.ts"
 * import { DurableObject, RpcTarget } from "cloudflare:workers";
 * import type { DurableObjectState } from "./_workers_types.d.ts";
 * ```
 *
 * A `@ts-types` comment, not a mapping in deno.json "imports": `deno publish` rewrites every
 * specifier the import map maps, so a mapped `cloudflare:workers` would be published as an
 * import of this file. Bundlers (esbuild, wrangler) leave `cloudflare:workers` external, and a
 * type-only import of this file is erased.
 *
 * A subset, hand-written after `@cloudflare/workers-types`; extend it as code needs more.
 * Only `DurableObject`, `RpcTarget`, `WorkerEntrypoint` and `env` exist at run time (in
 * workerd); every other name here is a type.
 *
 * @module
 */

/**
 * Base of classes whose instances cross RPC by reference: the caller gets a stub whose method
 * calls run on the instance, in the isolate that made it. When the last stub is disposed, the
 * runtime calls the instance's `[Symbol.dispose]()`, if it has one.
 */
export declare abstract class RpcTarget {
  #brand: never;
}

/** A Worker's entry point class; its public methods are callable over RPC through a service binding. */
export declare abstract class WorkerEntrypoint<Env = unknown> {
  #brand: never;
  protected ctx: ExecutionContext;
  protected env: Env;
  constructor(ctx: ExecutionContext, env: Env);
  fetch?(request: Request): Response | Promise<Response>;
}

/**
 * Base of Durable Object classes. Public methods are callable over RPC from a stub; `fetch`,
 * `alarm` and the `webSocket*` handlers are called by the runtime.
 */
export declare abstract class DurableObject<Env = unknown> {
  #brand: never;
  protected ctx: DurableObjectState;
  protected env: Env;
  constructor(ctx: DurableObjectState, env: Env);
  fetch?(request: Request): Response | Promise<Response>;
  alarm?(alarmInfo?: AlarmInvocationInfo): void | Promise<void>;
  webSocketMessage?(ws: WorkerdWebSocket, message: string | ArrayBuffer): void | Promise<void>;
  webSocketClose?(
    ws: WorkerdWebSocket,
    code: number,
    reason: string,
    wasClean: boolean,
  ): void | Promise<void>;
  webSocketError?(ws: WorkerdWebSocket, error: unknown): void | Promise<void>;
}

/** The Worker's bindings, importable at module scope (workerd 2025 and later). */
export declare const env: Record<string, unknown>;

/** The `ctx` of a Worker's handlers. */
export interface ExecutionContext {
  waitUntil(promise: Promise<unknown>): void;
  passThroughOnException(): void;
}

/** What the runtime passes to `alarm()`. */
export interface AlarmInvocationInfo {
  readonly isRetry: boolean;
  readonly retryCount: number;
}

/** workerd's `WebSocket`: the standard one, plus accepting and hibernation attachments. */
export interface WorkerdWebSocket extends WebSocket {
  /** Starts delivering events of this end of a `WebSocketPair` to the current isolate. */
  accept(): void;
  /** Keeps `value` (structured-cloneable, at most 2 KiB) with the socket across hibernation. */
  serializeAttachment(value: unknown): void;
  deserializeAttachment(): unknown;
}

/** `new WebSocketPair()` (a workerd global): `0` is the client end, `1` the server end. */
export interface WebSocketPairConstructor {
  new (): { 0: WorkerdWebSocket; 1: WorkerdWebSocket };
}

/** workerd's `ResponseInit`: a `101` response carries the client end of a WebSocket. */
export interface WorkerdResponseInit extends ResponseInit {
  webSocket?: WebSocket | null;
}

/** workerd's (and Miniflare's) `Response`: an accepted upgrade carries the client's WebSocket. */
export interface WorkerdResponse extends Response {
  readonly webSocket: WorkerdWebSocket | null;
}

/** A Durable Object's `ctx`. */
export interface DurableObjectState {
  readonly id: DurableObjectId;
  readonly storage: DurableObjectStorage;
  waitUntil(promise: Promise<unknown>): void;
  blockConcurrencyWhile<T>(callback: () => Promise<T>): Promise<T>;
  /** Accepts a server-end WebSocket with the Hibernation API: events go to `webSocket*`. */
  acceptWebSocket(ws: WebSocket, tags?: string[]): void;
  getWebSockets(tag?: string): WorkerdWebSocket[];
  getTags(ws: WebSocket): string[];
  setWebSocketAutoResponse(pair?: WebSocketRequestResponsePair): void;
  setHibernatableWebSocketEventTimeout(timeoutMs?: number): void;
  abort(reason?: string): void;
}

/** A request and its response that the runtime answers without waking the object. */
export interface WebSocketRequestResponsePair {
  readonly request: string;
  readonly response: string;
}

/** A Durable Object's transactional key-value storage and its alarm. */
export interface DurableObjectStorage {
  get<T = unknown>(key: string): Promise<T | undefined>;
  get<T = unknown>(keys: string[]): Promise<Map<string, T>>;
  put<T>(key: string, value: T): Promise<void>;
  put<T>(entries: Record<string, T>): Promise<void>;
  delete(key: string): Promise<boolean>;
  delete(keys: string[]): Promise<number>;
  deleteAll(): Promise<void>;
  list<T = unknown>(options?: DurableObjectListOptions): Promise<Map<string, T>>;
  transaction<T>(closure: (txn: DurableObjectStorage) => Promise<T>): Promise<T>;
  sync(): Promise<void>;
  getAlarm(): Promise<number | null>;
  setAlarm(scheduledTime: number | Date): Promise<void>;
  deleteAlarm(): Promise<void>;
}

/** Options of `DurableObjectStorage.list`. */
export interface DurableObjectListOptions {
  start?: string;
  startAfter?: string;
  end?: string;
  prefix?: string;
  reverse?: boolean;
  limit?: number;
}

/** Names one Durable Object of a namespace. */
export interface DurableObjectId {
  toString(): string;
  equals(other: DurableObjectId): boolean;
  readonly name?: string;
}

/** A Durable Object namespace binding, for a class `T`. */
export interface DurableObjectNamespace<T = undefined> {
  idFromName(name: string): DurableObjectId;
  idFromString(id: string): DurableObjectId;
  newUniqueId(options?: { jurisdiction?: string }): DurableObjectId;
  get(id: DurableObjectId, options?: { locationHint?: string }): DurableObjectStub<T>;
  getByName(name: string, options?: { locationHint?: string }): DurableObjectStub<T>;
}

/** A stub of the Durable Object `T`: its public methods over RPC, and `fetch`. */
export type DurableObjectStub<T = undefined> = RpcStub<T> & {
  readonly id: DurableObjectId;
  readonly name?: string;
  fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response>;
};

/**
 * The stub of `T` (an `RpcTarget`, a Durable Object, an entry point): each public method,
 * returning a promise; results that are `RpcTarget`s arrive as stubs. Disposing the stub
 * releases the remote object (see {@linkcode RpcTarget}).
 */
export type RpcStub<T> =
  & {
    [K in keyof T as K extends "fetch" ? never : T[K] extends AnyFunction ? K : never]: T[K] extends
      (...args: infer A) => infer R ? (...args: A) => Promise<Stubbed<Awaited<R>>>
      : never;
  }
  & Disposable;

/** How a value comes back over RPC: `RpcTarget`s as stubs, everything else as a copy. */
export type Stubbed<R> = R extends RpcTarget ? RpcStub<R> : R;

// deno-lint-ignore no-explicit-any
type AnyFunction = (...args: any[]) => unknown;
