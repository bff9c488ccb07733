/**
 * The proxy conformance suite: what the gateway must do with any upstream
 * client, registered for one ({@linkcode proxyConformance}). Each case runs
 * a real gateway in front of a raw-socket upstream (`raw_upstream.ts`)
 * that writes its responses byte by byte, and a client (Deno's `fetch`) in
 * front of the gateway.
 *
 * @module
 */

import { useDirectOps } from "../../src/deno/_socket.ts";
import assert from "node:assert/strict";
import { serveGateway } from "../../src/deno/mod.ts";
import { UpstreamBodyFailed } from "../../src/deno/_upstream_body.ts";
import type { GatewayOptions } from "../../src/deno/mod.ts";
import {
  headerOf,
  okResponse,
  pattern,
  type RawUpstream,
  rawUpstream,
  type Respond,
  sha256,
} from "./raw_upstream.ts";
import { waitFor, within } from "./real_time.ts";
import { captureConsole } from "./console.ts";
import { connectionConformance } from "./proxy_conformance_wire.ts";

/** Runs `run` with a gateway (of client `kind`) in front of an upstream answering with `respond`. */
export async function throughGateway(
  kind: "http1" | "fetch",
  respond: Respond,
  run: (base: string, upstream: RawUpstream) => Promise<void>,
  options: Partial<GatewayOptions> = {},
): Promise<void> {
  await using upstream = rawUpstream(respond);
  await using gateway = serveGateway({
    upstream: upstream.url,
    listen: { hostname: "127.0.0.1", port: 0 },
    upstreamClient: kind,
    ...options,
  });
  await run(`http://127.0.0.1:${gateway.addr.port}`, upstream);
}

/** Whether reading the whole body of `res` fails. */
async function bodyFails(res: Response): Promise<boolean> {
  try {
    await res.arrayBuffer();
    return false;
  } catch {
    return true;
  }
}

const MiB = 1024 * 1024;

/**
 * Registers the suite's tests for the gateway with upstream client `kind`:
 * the bodies' here, the heads' and connections' in
 * `proxy_conformance_wire.ts`.
 */
export function proxyConformance(
  kind: "http1" | "fetch",
  options: { directOps?: boolean } = {},
): void {
  const direct = options.directOps ?? true;
  const label = direct ? kind : `${kind}, the connections' own methods`;
  // Off, the gateway's sockets are read and written by the connections' own methods (where
  // Deno's operations cannot be reached), for the tests run alone (they run one at a time).
  const test = (name: string, fn: () => Promise<void>) =>
    Deno.test(`proxy conformance (${label}): ${name}`, async () => {
      useDirectOps(direct);
      try {
        await fn();
      } finally {
        useDirectOps(true);
      }
    });
  const through = (
    respond: Respond,
    run: (base: string, upstream: RawUpstream) => Promise<void>,
    options?: Partial<GatewayOptions>,
  ) => throughGateway(kind, respond, run, options);

  for (const framing of ["chunked", "length"] as const) {
    test(`a ${framing} body streams: its first part arrives before the upstream sends the last`, async () => {
      const received = Promise.withResolvers<void>();
      await through(async (_req, conn) => {
        await conn.write(
          framing === "chunked"
            ? "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nfirst;\r\n"
            : "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nfirst;",
        );
        // Past this, the client cannot have the first part unless it was forwarded alone.
        await within(received.promise, 5_000, "the client to receive the first part").catch(
          () => {},
        );
        await conn.write(framing === "chunked" ? "4\r\nrest\r\n0\r\n\r\n" : "rest");
      }, async (base) => {
        const res = await fetch(`${base}/stream`);
        const reader = res.body!.getReader();
        const first = await within(reader.read(), 5_000, "the first part");
        received.resolve();
        let text = new TextDecoder().decode(first.value);
        for (let r = await reader.read(); !r.done; r = await reader.read()) {
          text += new TextDecoder().decode(r.value);
        }
        assert.equal(text, "first;rest");
      });
    });
  }

  for (const framing of ["length", "chunked"] as const) {
    test(`a 10 MiB request body by ${framing} reaches the upstream intact`, async () => {
      const payload = pattern(10 * MiB);
      const expected = await sha256(payload);
      await through(async (req, conn) => {
        await conn.write(okResponse(`${req.body.length} ${await sha256(req.body)}`));
      }, async (base, upstream) => {
        let sent = 0;
        const body = framing === "length" ? payload : new ReadableStream<Uint8Array>({
          pull(controller) {
            if (sent >= payload.length) return controller.close();
            controller.enqueue(payload.slice(sent, sent + 256 * 1024));
            sent += 256 * 1024;
          },
        });
        const res = await fetch(
          `${base}/upload`,
          { method: "PUT", body, duplex: "half" } as RequestInit,
        );
        assert.equal(res.status, 200);
        assert.equal(await res.text(), `${payload.length} ${expected}`);
        const req = upstream.requests[0]!;
        if (framing === "length") assert.equal(headerOf(req, "content-length"), String(10 * MiB));
        else assert.equal(headerOf(req, "transfer-encoding")?.toLowerCase(), "chunked");
      });
    });
  }

  test("a 64 MiB response arrives intact", async () => {
    const payload = pattern(64 * MiB);
    await through(async (_req, conn) => {
      await conn.write(`HTTP/1.1 200 OK\r\nContent-Length: ${payload.length}\r\n\r\n`);
      for (let at = 0; at < payload.length; at += MiB) {
        await conn.write(payload.subarray(at, at + MiB));
      }
    }, async (base) => {
      const res = await fetch(`${base}/big`);
      assert.equal(res.status, 200);
      const got = new Uint8Array(await res.arrayBuffer());
      assert.equal(got.length, payload.length);
      assert.equal(await sha256(got), await sha256(payload));
    });
  });

  // Cut after 50,000 bytes of 100,000 (a streamed body), after 5 of 100 (one small enough to be
  // passed on whole), and before any byte of it.
  const cuts = [["length", 100_000, 50_000], ["chunked", 100_000, 50_000], ["length", 100, 5], [
    "length",
    100,
    0,
  ]] as const;
  for (const [framing, length, sent] of cuts) {
    test(`a body the upstream cuts short (${framing}, ${sent} of ${length} bytes) is never a complete 200, and is reported as the upstream's failure`, async () => {
      const part = "x".repeat(sent);
      const reported: unknown[] = [];
      using logged = captureConsole("error");
      await through(async (_req, conn) => {
        await conn.write(
          framing === "length"
            ? `HTTP/1.1 200 OK\r\nContent-Length: ${length}\r\n\r\n${part}`
            : `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${
              length.toString(16)
            }\r\n${part}`,
        );
        conn.close();
      }, async (base) => {
        const res = await fetch(`${base}/cut`);
        if (res.status === 200) {
          assert.ok(await bodyFails(res), "the body read to a clean end");
          // Told once, as the upstream's: the head was out, so only the log can say why.
          await waitFor(() => reported.length > 0, "the failure reported");
          assert.equal(reported.length, 1);
          assert.ok(reported[0] instanceof UpstreamBodyFailed, String(reported[0]));
        } else {
          // Nothing of it went out yet: a clean 502, its reason told.
          assert.equal(res.status, 502);
          assert.equal(await res.text(), "Bad Gateway\n");
          assert.equal(reported.length, 1);
        }
      }, { onUpstreamError: (e) => reported.push(e) });
      // Not a failure of the gateway's own (Deno.serve hands a failed body to the listener's
      // onError, and Hono a handler's throw to its own, which must not log it or answer 500).
      assert.deepEqual(logged.lines(), []);
    });
  }

  connectionConformance(test, through);
}
