/**
 * One connection to a Redis or Valkey server, made when first needed and
 * made again after it is lost, that never queues or retries a command: while
 * the server cannot be reached, every operation fails at once (a refused
 * connection) or after `timeoutMs` (a server that does not answer), and the
 * budget holder counts it as an outage. A refused credential (`WRONGPASS`,
 * `NOAUTH`, `NOPERM`) is a {@linkcode StoreRefusedError}: a configuration
 * error, never an outage.
 *
 * @module
 */

import { createClient } from "@redis/client";
import type { Clock } from "../fairqueuing/clock.ts";
import { TIMED_OUT, withTimeout } from "../fairqueuing/timeout.ts";
import { StoreRefusedError } from "../budgets/store.ts";
import type { RedisAddress } from "./_redis_url.ts";

/** The client of one connection. */
export type RedisClient = ReturnType<typeof newClient>;

/** An error an operation reports as it is (its message says everything). */
export class RedisStoreError extends Error {
  override name = "RedisStoreError";
}

/** The replies that mean the server refused our credential. */
const REFUSALS = /^(WRONGPASS|NOAUTH|NOPERM)\b/;

/** How to connect. */
export interface ConnectionOptions {
  /** How long connecting, or one operation, may take, in ms. */
  timeoutMs: number;
  /** PEM certificates of the authorities to trust for TLS (default: the system's). */
  caCerts: string[] | undefined;
  /** The clock that times operations. */
  clock: Clock;
}

/** One connection, made anew when lost. */
export class RedisConnection {
  /** The server, as `redis://host:port` (never with the password). */
  readonly where: string;
  #address: RedisAddress;
  #options: ConnectionOptions;
  /** The connection: ready, or being made while {@linkcode #connecting} is set. */
  #client: RedisClient | null = null;
  #connecting: Promise<RedisClient> | null = null;
  #closed = false;

  /** A connection to `address`, made on the first operation. */
  constructor(address: RedisAddress, options: ConnectionOptions) {
    this.#address = address;
    this.where = address.where;
    this.#options = options;
  }

  /**
   * `operation` on the connection, within `timeoutMs`. Rejects with a
   * {@linkcode StoreRefusedError} for a refused credential, the
   * operation's own {@linkcode RedisStoreError}, or an `Error` saying
   * `Cannot <what>` and why.
   */
  async run<T>(what: string, operation: (client: RedisClient) => Promise<T>): Promise<T> {
    if (this.#closed) throw new Error(`Cannot ${what}: the store at ${this.where} is closed`);
    const connection = this.#connection();
    const client = this.#client;
    let answer: T | typeof TIMED_OUT;
    try {
      answer = await withTimeout(
        this.#options.clock,
        connection.then(operation),
        this.#options.timeoutMs,
      );
    } catch (error) {
      if (error instanceof RedisStoreError) throw error;
      const message = String((error as Error)?.message ?? error);
      if (REFUSALS.test(message)) throw new StoreRefusedError(this.where, message);
      throw new Error(`Cannot ${what}: the store at ${this.where} failed: ${message}`, {
        cause: error,
      });
    }
    if (answer === TIMED_OUT) {
      // A connection that does not answer is of no more use: the next operation makes another.
      if (this.#client === client) this.#drop();
      throw new Error(
        `Cannot ${what}: the store at ${this.where} did not answer within ${this.#options.timeoutMs} ms`,
      );
    }
    return answer;
  }

  /** Closes the connection, once the operations under way have their answer. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const client = this.#client;
    const ready = this.#connecting === null;
    this.#client = null;
    this.#connecting = null;
    if (client === null) return;
    if (ready && client.isReady) {
      try {
        await client.close();
        return;
      } catch {
        // Lost meanwhile.
      }
    }
    destroy(client);
  }

  /** The ready connection, made anew when there is none (or it was lost). */
  #connection(): Promise<RedisClient> {
    if (this.#connecting !== null) return this.#connecting;
    if (this.#client?.isReady) return Promise.resolve(this.#client);
    this.#drop();
    const client = newClient(this.#address, this.#options);
    this.#client = client;
    this.#connecting = client.connect().then(
      () => {
        if (this.#client !== client) throw new Error("the connection was closed as it was made");
        this.#connecting = null;
        return client;
      },
      (error) => {
        if (this.#client === client) this.#drop();
        throw error;
      },
    );
    return this.#connecting;
  }

  /** Forgets the connection, closing it. */
  #drop(): void {
    const client = this.#client;
    this.#client = null;
    this.#connecting = null;
    if (client !== null) destroy(client);
  }
}

/** A client that neither queues nor retries: each failure reaches the operation that meets it. */
function newClient(address: RedisAddress, options: ConnectionOptions) {
  const { tls, host, port, username, password, database } = address;
  const client = createClient({
    socket: {
      host,
      port,
      connectTimeout: options.timeoutMs,
      // The next operation connects again.
      reconnectStrategy: false,
      ...(tls
        ? { tls: true, ...(options.caCerts === undefined ? {} : { ca: options.caCerts }) }
        : {}),
    },
    ...(username === undefined ? {} : { username }),
    ...(password === undefined ? {} : { password }),
    database,
    // A command while disconnected fails at once instead of waiting in a queue.
    disableOfflineQueue: true,
    // Redis Enterprise's maintenance notices: not for a plain server (and they read the
    // environment, which Deno asks permission for).
    maintNotifications: "disabled",
  });
  // Without a listener an error event would throw; the operation meets the error anyway.
  client.on("error", () => {});
  return client;
}

function destroy(client: RedisClient): void {
  try {
    client.destroy();
  } catch {
    // Closed already.
  }
}
