/**
 * Opens `count` keep-alive connections to 127.0.0.1:`port`, sends one
 * request on each and reads its response, prints `open`, then holds them
 * all idle until stdin closes (`bench/gateway_idle_memory.sh`).
 *
 * Run: `deno run --allow-net=127.0.0.1 bench/_idle_clients.ts <port> <count>`.
 *
 * @module
 */

const port = Number(Deno.args[0]);
const count = Number(Deno.args[1]);
if (!(port > 0) || !(count > 0)) throw new TypeError("Cannot open: give a port and a count");
const request = new TextEncoder().encode(
  "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Remote-User: alice\r\n" +
    "X-Remote-Group: system:authenticated\r\n\r\n",
);
const buffer = new Uint8Array(4096);
const conns: Deno.TcpConn[] = [];
for (let i = 0; i < count; i++) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(request);
  if (await conn.read(buffer) === null) throw new Error("Cannot open: the server closed");
  conns.push(conn);
}
console.log("open");
// Held until told to let go.
for await (const _ of Deno.stdin.readable);
for (const conn of conns) conn.close();
