import assert from "node:assert/strict";
import { COORDINATOR_USAGE, coordinatorCommand } from "../../src/cli/coordinator.ts";
import { memoryIO, readUntil, run, spawnApf, stopApf } from "../_helpers/cli.ts";
import { waitFor } from "../_helpers/real_time.ts";

Deno.test("apf coordinator --help and bad options", async () => {
  const help = await run(["coordinator", "--help"]);
  assert.equal(help.code, 0);
  assert.ok(help.stdout.startsWith(`usage: ${COORDINATOR_USAGE}\n`));
  for (
    const [args, message] of [
      [["--listen", "7070"], '--listen must be host:port (port 0..65535), got "7070"'],
      [["--server-concurrency", "0"], "--server-concurrency must be a positive integer"],
      [["--listen", "0.0.0.0:0"], "without a token it listens on loopback only"],
      [
        ["--hello-timeout", "5"],
        '--hello-timeout must be a duration of 1ms or more, like 10s, got "5"',
      ],
      [["--header-timeout", "x"], "--header-timeout must be a duration of 1ms or more"],
      [["--max-connections", "1.5"], '--max-connections must be a positive integer, got "1.5"'],
    ] as const
  ) {
    const { code, stderr } = await run(["coordinator", ...args]);
    assert.equal(code, 2, args.join(" "));
    assert.ok(stderr.includes(message), stderr);
  }
  const short = await run(["coordinator", "--token-file", "t"], { t: "short\n" });
  assert.equal(short.code, 2);
  assert.match(short.stderr, /the token in t must have 16 characters or more/);
  assert.ok(!short.stderr.includes("short\n"), "the token itself is never printed");
});

const level = (shares: number) =>
  `apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: { name: small }
spec:
  type: Limited
  limited: { nominalConcurrencyShares: ${shares}, limitResponse: { type: Reject } }
`;

async function protocolClient(port: string) {
  const socket = new WebSocket(`ws://127.0.0.1:${port}/`);
  const messages: Record<string, unknown>[] = [];
  let wake = () => {};
  socket.onmessage = (e) => {
    messages.push(JSON.parse(e.data));
    wake();
  };
  const closed = new Promise((resolve) => socket.onclose = resolve);
  await new Promise((resolve) => socket.onopen = resolve);
  const next = async (n: number) => {
    while (messages.length < n) await new Promise<void>((r) => wake = r);
    return messages[n - 1]!;
  };
  return { socket, next, closed };
}

Deno.test("apf coordinator: token, welcome, SIGHUP reload pushed to clients, an invalid reload refused, stop exits 0", async () => {
  const files: Record<string, string> = {
    "apf.yaml": level(10),
    token: "0123456789abcdef-secret\n",
  };
  const { io, output } = memoryIO(files);
  let stop = () => {};
  let hangup = () => {};
  const done = coordinatorCommand(
    ["--listen", "127.0.0.1:0", "--config", "apf.yaml", "--token-file", "token"],
    io,
    (on) => {
      stop = on;
      return () => {};
    },
    (on) => {
      hangup = on;
      return () => {};
    },
  );
  await waitFor(() => /listening on ws:/.test(output.stdout), "listening");
  const [, port] = /listening on ws:\/\/127\.0\.0\.1:(\d+) \(clients must present the token\)/.exec(
    output.stdout,
  )!;
  const c = await protocolClient(port!);
  c.socket.send(
    JSON.stringify({
      t: "hello",
      v: [1],
      token: "0123456789abcdef-secret",
      client: "t",
      resume: null,
    }),
  );
  const welcome = await c.next(1);
  assert.equal(welcome.t, "welcome");

  // A client with a wrong token is refused, logged and counted; its token is never printed.
  const intruder = await protocolClient(port!);
  intruder.socket.send(
    JSON.stringify({ t: "hello", v: [1], token: "not-the-token", client: "gw-7", resume: null }),
  );
  assert.equal((await intruder.next(1)).code, "unauthenticated");
  await intruder.closed;
  await waitFor(() => output.stderr.includes('refused client "gw-7"'), "the refusal logged");
  assert.ok(!output.stderr.includes("not-the-token"));
  assert.equal((welcome.config as { objects: unknown[] }).objects.length, 1);

  files["apf.yaml"] = level(20);
  hangup();
  await waitFor(() => output.stdout.includes("configuration reloaded"), "reloaded");
  assert.match(output.stdout, /configuration reloaded: PriorityLevelConfigurations ~small\n/);
  assert.equal((await c.next(2)).t, "config");

  files["apf.yaml"] = "kind: Nonsense\n";
  hangup();
  await waitFor(() => output.stderr.includes("reload refused"), "refused");

  // A file cut short to nothing would drop every user object: refused, and said so.
  files["apf.yaml"] = "";
  hangup();
  await waitFor(
    () => output.stderr.includes("no FlowSchema and no PriorityLevelConfiguration"),
    "empty",
  );
  assert.match(output.stderr, /would drop all 1 of the current one/);
  c.socket.close();
  await c.closed;
  stop();
  assert.equal(await done, 0);
  assert.match(output.stdout, /apf coordinator: stopped\n$/);
  assert.ok(
    !output.stdout.includes("secret") && !output.stderr.includes("secret"),
    "the token is never printed",
  );
});

Deno.test("apf coordinator, black box: loopback without a token, SIGTERM exits 0", async () => {
  await using apf = spawnApf(["coordinator", "--listen", "127.0.0.1:0"]);
  const [, port] = await readUntil(
    apf.stdout,
    /listening on ws:\/\/127\.0\.0\.1:(\d+) \(no token: loopback only\)/,
    apf.seen,
  );
  const c = await protocolClient(port!);
  c.socket.send(JSON.stringify({ t: "hello", v: [1], token: null, client: "t", resume: null }));
  assert.equal((await c.next(1)).t, "welcome");
  c.socket.close();
  await c.closed;
  assert.equal(await stopApf(apf), 0);
  assert.equal(await apf.stderr, "");
});
