import assert from "node:assert/strict";
import { sleep } from "../_helpers/real_time.ts";
import { testUpstream } from "../_helpers/upstream.ts";
import { connect, roundTrip } from "./_raw_http.ts";

const MAIN = new URL("../../src/cli/main.ts", import.meta.url).pathname;

/** Text of a stream, collected in the background. */
function collect(stream: ReadableStream<Uint8Array>, onText: (all: string) => void) {
  let all = "";
  return stream.pipeThrough(new TextDecoderStream()).pipeTo(
    new WritableStream({
      write(chunk) {
        all += chunk;
        onText(all);
      },
    }),
  ).then(() => all);
}

Deno.test("apf serve under ulimit -n 128 survives a flood of idle connections past its descriptors", async () => {
  const upstream = testUpstream();
  // `exec` keeps the limit for deno itself; "$0" is the first argument after the script.
  const child = new Deno.Command("bash", {
    args: [
      "-c",
      'ulimit -n 128 && exec "$0" "$@"',
      Deno.execPath(),
      "run",
      "--allow-net=127.0.0.1",
      "--allow-read",
      "--allow-env=LOG_TOKENS,LOG_STREAM,INIT_CWD",
      MAIN,
      "serve",
      "--upstream",
      upstream.url,
      "--listen",
      "127.0.0.1:0",
      "--header-timeout",
      "300ms",
      "--idle-timeout",
      "300ms",
      "--admin-listen",
      "127.0.0.1:0",
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let listening: (ports: [number, number]) => void = () => {};
  const ports = new Promise<[number, number]>((resolve) => listening = resolve);
  const stdout = collect(child.stdout, (all) => {
    const main = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(all);
    const admin = /admin routes on http:\/\/127\.0\.0\.1:(\d+)/.exec(all);
    if (main !== null && admin !== null) listening([Number(main[1]), Number(admin[1])]);
  });
  const stderr = collect(child.stderr, () => {});
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    listening([0, 0]);
    return s;
  });
  const flood: Deno.TcpConn[] = [];
  try {
    const [gatewayPort, adminPort] = await ports;
    assert.notEqual(gatewayPort, 0, "the gateway exited before listening");
    // Twice as many connections as descriptors: accept() fails with EMFILE while they are open.
    for (let i = 0; i < 250; i++) flood.push(await connect(gatewayPort));
    await sleep(1_500); // several header timeouts: the gateway closes some, accepts more, …
    assert.equal(exited, false, "the gateway exited during the flood");
    for (const conn of flood.splice(0)) conn.close();

    let answer = "";
    for (let i = 0; i < 50 && !answer.startsWith("HTTP/1.1 200"); i++) {
      try {
        const conn = await connect(gatewayPort);
        try {
          answer = await roundTrip(conn, "/after-the-flood");
        } finally {
          conn.close();
        }
      } catch {
        // Still closing the flood's connections: try again.
      }
      if (!answer.startsWith("HTTP/1.1 200")) await sleep(100);
    }
    assert.match(answer, /^HTTP\/1\.1 200 OK\r\n[^]*ok \/after-the-flood$/);
    assert.equal(exited, false);
    // The flood did hit the limit: accept() failed, and the header timeout freed descriptors.
    const conn = await connect(adminPort);
    const metrics = await roundTrip(conn, "/metrics");
    conn.close();
    const count = (pattern: RegExp) => Number(pattern.exec(metrics)?.[1] ?? 0);
    assert.ok(count(/^apf_server_accept_errors_total\{listener="main"\} (\d+)$/m) > 0, metrics);
    assert.ok(
      count(/^apf_server_connection_timeouts_total\{listener="main",timeout="header"\} (\d+)$/m) >
        0,
      metrics,
    );
  } finally {
    for (const conn of flood) conn.close();
    if (!exited) child.kill("SIGTERM");
    const { code } = await status;
    await stdout;
    const errors = await stderr;
    await upstream.close();
    assert.equal(code, 0, `the gateway exited with ${code}: ${errors}`);
    // (Deno may warn that it could not load the CA certificates while out of descriptors.)
    assert.doesNotMatch(errors, /Uncaught/);
  }
});
