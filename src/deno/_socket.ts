/**
 * Reads and writes on a TCP connection, with Deno's socket operations
 * called directly where the runtime exposes them.
 *
 * `Deno.TcpConn`'s `read` is an async function that also keeps each read's
 * promise in a set (for `ref`/`unref`), and its `write` is an async function
 * around the operation: two async frames per request of the gateway's, and
 * about a sixth of what a request allocates (`bench/RESULTS.md`, "Deno's
 * socket operations called directly"). The operations under them
 * (`read(rid, buffer)` and `write(rid, bytes)` of Deno's core, the ones
 * those methods call) are reached through `Deno[Deno.internal].core`, with
 * the connection's resource id, which the connection holds under a symbol
 * described as `Deno.internal.rid`. None of this is public API: where any
 * of it is missing (another runtime, another Deno version, a TLS
 * connection), the connection's own methods are used instead, with the same
 * results.
 *
 * The connections read this way are never `unref`ed (the gateway's and its
 * upstream client's): that is all the set kept by `read` is for.
 *
 * @module
 */

/** The reads and writes of one connection. */
export interface Socket {
  /** Reads into `buffer` (never empty): resolves with the count, 0 at the end of the stream. */
  read(buffer: Uint8Array): Promise<number>;
  /** Writes some of `bytes`: resolves with how many were written. */
  write(bytes: Uint8Array): Promise<number>;
}

/** Deno's core operations used here. */
interface CoreOps {
  read(rid: number, buffer: Uint8Array): Promise<number>;
  write(rid: number, bytes: Uint8Array): Promise<number>;
}

/** Deno's core operations, or `null` where they cannot be reached. */
function findCore(): CoreOps | null {
  try {
    const key = Reflect.get(Deno, "internal");
    if (typeof key !== "symbol") return null;
    const core = (Reflect.get(Deno, key) as { core?: Partial<CoreOps> } | undefined)?.core;
    if (typeof core?.read !== "function" || typeof core.write !== "function") return null;
    return core as CoreOps;
  } catch {
    return null;
  }
}

let core: CoreOps | null = typeof Deno === "object" ? findCore() : null;
/** The symbol a connection holds its resource id under, once seen. */
let ridKey: symbol | null = null;

/**
 * The resource id of `conn`, a `TcpConn`, or `null` (another kind of
 * connection, or no id where it is looked for).
 */
function ridOf(conn: Deno.Conn): number | null {
  if (Object.getPrototypeOf(conn)?.constructor?.name !== "TcpConn") return null;
  if (ridKey === null) {
    ridKey = Object.getOwnPropertySymbols(conn).find((s) =>
      s.description === "Deno.internal.rid"
    ) ??
      null;
    if (ridKey === null) return null;
  }
  const rid = (conn as unknown as Record<symbol, unknown>)[ridKey];
  return typeof rid === "number" && Number.isInteger(rid) && rid >= 0 ? rid : null;
}

/** The reads and writes of `conn`, by Deno's operations where it can (see the module's text). */
export function socketOf(conn: Deno.Conn): Socket {
  const rid = core === null ? null : ridOf(conn);
  return rid === null ? new ConnSocket(conn) : new DirectSocket(rid, core!);
}

/** On the connection's own methods. */
class ConnSocket implements Socket {
  readonly #conn: Deno.Conn;

  constructor(conn: Deno.Conn) {
    this.#conn = conn;
  }

  read(buffer: Uint8Array): Promise<number> {
    return this.#conn.read(buffer).then(countOrZero);
  }

  write(bytes: Uint8Array): Promise<number> {
    return this.#conn.write(bytes);
  }
}

function countOrZero(n: number | null): number {
  return n ?? 0;
}

/** On Deno's core operations. */
class DirectSocket implements Socket {
  readonly #rid: number;
  readonly #ops: CoreOps;

  constructor(rid: number, ops: CoreOps) {
    this.#rid = rid;
    this.#ops = ops;
  }

  read(buffer: Uint8Array): Promise<number> {
    return this.#ops.read(this.#rid, buffer);
  }

  write(bytes: Uint8Array): Promise<number> {
    return this.#ops.write(this.#rid, bytes);
  }
}

/** For tests: whether {@linkcode socketOf} calls Deno's operations directly for `conn`. */
export function isDirect(socket: Socket): boolean {
  return socket instanceof DirectSocket;
}

/** For tests: turns the direct operations off (`false`) or looks for them again (`true`). */
export function useDirectOps(on: boolean): void {
  core = on ? findCore() : null;
}
