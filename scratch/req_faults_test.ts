import { serveGateway } from "../src/deno/mod.ts";
import { okResponse, rawUpstream } from "../tests/_helpers/raw_upstream.ts";
import { sleep } from "../tests/_helpers/real_time.ts";
import { captureConsole } from "../tests/_helpers/console.ts";
const enc = new TextEncoder();
async function rawClient(port: number, text: string, opts: { closeAfterMs?: number; halfClose?: boolean; readMs?: number } = {}): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(enc.encode(text));
  if (opts.halfClose) await conn.closeWrite();
  if (opts.closeAfterMs !== undefined) { await sleep(opts.closeAfterMs); try { conn.close(); } catch { /**/ } return "(closed by client)"; }
  const buf = new Uint8Array(65536); let out = "";
  const timer = setTimeout(() => { try { conn.close(); } catch { /**/ } }, opts.readMs ?? 1500);
  try { for (;;) { const n = await conn.read(buf); if (n === null) break; out += new TextDecoder().decode(buf.subarray(0, n)); } } catch (e) { out += `(read error ${(e as Error).name})`; }
  clearTimeout(timer);
  try { conn.close(); } catch { /**/ }
  return out;
}
for (const kind of ["http1", "fetch"] as const) {
  Deno.test(`${kind}: request-side faults`, async () => {
    using logged = captureConsole("error");
    const reported: string[] = [];
    await using upstream = rawUpstream(async (req, conn) => {
      if (req.target === "/early") { await conn.write("HTTP/1.1 413 Too Large\r\nContent-Length: 3\r\nConnection: close\r\n\r\nbig"); conn.close(); return; }
      await conn.write(okResponse(`got ${req.body.length}`));
    });
    await using gw = serveGateway({ upstream: upstream.url, listen: { hostname: "127.0.0.1", port: 0 }, upstreamClient: kind, requestTimeoutMs: 500, onUpstreamError: (e) => reported.push(String(e)) });
    const p = gw.addr.port;
    const H = "Host: x\r\n";
    const cases: [string, Promise<string>][] = [
      ["cl short then close", rawClient(p, `POST /a HTTP/1.1\r\n${H}Content-Length: 1000\r\n\r\n0123456789`, { closeAfterMs: 50 })],
      ["bad chunk", rawClient(p, `POST /a HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n`)],
      ["cl short then stall", rawClient(p, `POST /a HTTP/1.1\r\n${H}Content-Length: 1000\r\n\r\n0123456789`, { readMs: 1500 })],
      ["expect 100 no body", rawClient(p, `POST /a HTTP/1.1\r\n${H}Content-Length: 5\r\nExpect: 100-continue\r\n\r\n`, { readMs: 1200 })],
      ["pipelined", rawClient(p, `GET /1 HTTP/1.1\r\n${H}\r\nGET /2 HTTP/1.1\r\n${H}Connection: close\r\n\r\n`)],
      ["huge header", rawClient(p, `GET /h HTTP/1.1\r\n${H}X-Big: ${"a".repeat(200_000)}\r\n\r\n`)],
      ["half close", rawClient(p, `GET /hc HTTP/1.1\r\n${H}Connection: close\r\n\r\n`, { halfClose: true })],
      ["early answer", rawClient(p, `POST /early HTTP/1.1\r\n${H}Content-Length: 100000\r\n\r\n${"x".repeat(100)}`, { readMs: 1500 })],
      ["http/1.0", rawClient(p, `GET /10 HTTP/1.0\r\n\r\n`)],
      ["garbage", rawClient(p, `HELLO THERE\r\n\r\n`)],
    ];
    for (const [name, res] of cases) console.log(name.padEnd(22), JSON.stringify((await res).slice(0, 150)));
    await sleep(700);
    const seats = gw.middleware.snapshot()!.levels.map((l) => l.queueSet.seatsInUse + l.queueSet.waitingRequests).reduce((a, b) => a + b, 0);
    const conns = gw.middleware.metrics!.registry.expose().split("\n").filter((l) => l.startsWith("apf_server_connections{"));
    console.log("seats+waiting", seats, conns);
    console.log("reported", reported);
    console.log("logged", logged.lines());
  });
}
