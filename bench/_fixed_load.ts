/**
 * A fixed number of requests through a gateway, `concurrency` at a time on
 * kept-alive connections, as `wrk` sends them (the identity headers of
 * `bench/gateway_nginx.sh`); for a measure per request that needs a count,
 * not a duration (`bench/gateway_instructions.sh`).
 *
 * Run: `deno run --allow-net=127.0.0.1 bench/_fixed_load.ts <port> <requests> [concurrency=16]`.
 *
 * @module
 */

const [port, total, concurrency = "16"] = Deno.args;
if (port === undefined || total === undefined) {
  throw new TypeError("Cannot load: give a port and a number of requests");
}
let left = Number(total);
const headers = { "X-Remote-User": "alice", "X-Remote-Group": "system:authenticated" };
async function loop(): Promise<void> {
  while (left-- > 0) {
    const res = await fetch(`http://127.0.0.1:${port}/`, { headers });
    await res.arrayBuffer();
  }
}
await Promise.all(Array.from({ length: Number(concurrency) }, loop));
