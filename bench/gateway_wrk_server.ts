/**
 * The servers of the gateway latency benchmark (bench/gateway_wrk.sh):
 *
 * - `upstream <port> [delayMs]`: `Deno.serve` on 127.0.0.1, every request →
 *   `hello` (after `delayMs` ms of `setTimeout` when given, like a handler
 *   that waits on something);
 * - `proxy <port> <upstream>`: the reference for the cost of proxying
 *   itself, without APF: `fetch` the same path on the upstream and return
 *   its response as is (none of the gateway's header handling).
 *
 * Run: `deno run --allow-net=127.0.0.1 bench/gateway_wrk_server.ts <mode> <port> [arg]`.
 *
 * @module
 */

const [mode, portText, arg] = Deno.args;
const port = Number(portText);
if (!Number.isInteger(port)) {
  throw new TypeError(`Cannot start: port must be an integer, got ${portText}`);
}

let handler: (req: Request) => Response | Promise<Response>;
if (mode === "upstream") {
  const delayMs = Number(arg ?? 0);
  handler = delayMs > 0
    ? () => new Promise((resolve) => setTimeout(() => resolve(new Response("hello")), delayMs))
    : () => new Response("hello");
} else if (mode === "proxy") {
  if (arg === undefined) throw new TypeError("Cannot start: proxy needs the upstream origin");
  const origin = new URL(arg).origin;
  handler = (req) => {
    const url = req.url;
    return fetch(origin + url.slice(url.indexOf("/", url.indexOf("//") + 2)), {
      method: req.method,
      body: req.body,
    });
  };
} else {
  throw new TypeError(`Cannot start: mode must be upstream or proxy, got ${mode}`);
}

const server = Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, handler);
console.log(`listening ${mode} on 127.0.0.1:${port}`);
Deno.addSignalListener("SIGTERM", () => server.shutdown());
