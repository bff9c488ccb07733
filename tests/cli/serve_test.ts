import assert from "node:assert/strict";
import { parseHostPort, parseUpstream } from "../../src/cli/_address.ts";
import { SERVE_USAGE } from "../../src/cli/serve.ts";
import { serveCoordinator } from "../../src/deno/coordinator_server.ts";
import { sleep } from "../_helpers/real_time.ts";
import { closedPort, testUpstream } from "../_helpers/upstream.ts";
import { rawUpstream } from "../_helpers/raw_upstream.ts";
import { readUntil, run, spawnApf, stopApf } from "../_helpers/cli.ts";

Deno.test("apf serve --help prints the options", async () => {
  const { code, stdout } = await run(["serve", "--help"]);
  assert.equal(code, 0);
  assert.ok(stdout.startsWith(`usage: ${SERVE_USAGE}\n`));
  for (
    const option of [
      "--upstream",
      "--admin-listen",
      "--trust-identity-headers",
      "--upstream-client",
      "SIGTERM",
    ]
  ) {
    assert.ok(stdout.includes(option), option);
  }
  assert.match((await run(["help"])).stdout, /apf serve --upstream <url>/);
});

Deno.test("apf serve refuses bad options with exit 2, before listening", async () => {
  const cases: [string[], string][] = [
    [[], "--upstream is required"],
    [
      ["--upstream", "ftp://x"],
      '--upstream must be an http: or https: URL without credentials, query or fragment, got "ftp://x"',
    ],
    [["--upstream", "http://x/?a=1"], "--upstream must be an http: or https: URL"],
    [
      ["--upstream", "http://x", "--listen", "8080"],
      '--listen must be host:port (port 0..65535), got "8080"',
    ],
    [["--upstream", "http://x", "--admin-listen", "h:99999"], "--admin-listen must be host:port"],
    [
      ["--upstream", "http://x", "--request-timeout", "10"],
      '--request-timeout must be a duration of 1ms or more, like 30s or 1m30s, got "10"',
    ],
    [["--upstream", "http://x", "--request-timeout", "0s"], "--request-timeout must be"],
    [["--upstream", "http://x", "--server-concurrency", "0"], "--server-concurrency must be"],
    [
      ["--upstream", "http://x", "--server-concurrency-min", "4"],
      "--server-concurrency-min needs --server-concurrency auto",
    ],
    [
      ["--upstream", "http://x", "--server-concurrency", "auto", "--server-concurrency-max", "x"],
      '--server-concurrency-max must be a positive integer, got "x"',
    ],
    [
      [
        "--upstream",
        "http://x",
        "--server-concurrency",
        "auto",
        "--server-concurrency-min",
        "10",
        "--server-concurrency-max",
        "5",
      ],
      "--server-concurrency-max",
    ],
    [
      ["--upstream", "http://x", "--server-concurrency", "auto", "--coordinator", "ws://c:1"],
      "--server-concurrency auto learns this gateway's own limit",
    ],
    [
      ["--upstream", "http://x", "--header-timeout", "10"],
      '--header-timeout must be a duration of 1ms or more, like 10s or 1m30s, got "10"',
    ],
    [["--upstream", "http://x", "--idle-timeout", "0s"], "--idle-timeout must be a duration"],
    [
      ["--upstream", "http://x", "--max-connections", "0"],
      '--max-connections must be a positive integer, got "0"',
    ],
    [["--upstream", "http://x", "--bogus"], "unknown option --bogus"],
    [
      ["--upstream", "http://x", "--upstream-client", "h2"],
      '--upstream-client must be http1 or fetch, got "h2"',
    ],
    [
      ["--upstream", "http://x", "--coordinator", "http://c"],
      "--coordinator must be a ws:, wss:, redis:, rediss: URL or kv:PATH",
    ],
    [
      [
        "--upstream",
        "http://x",
        "--coordinator",
        "redis://:hunter2@c:6379",
        "--coordinator-mode",
        "exact",
      ],
      "--coordinator redis: offers the budget mode only",
    ],
    [
      ["--upstream", "http://x", "--coordinator", "ws://c", "--budget-lease", "5s"],
      "--budget-lease needs --coordinator-mode budget",
    ],
    [
      [
        "--upstream",
        "http://x",
        "--coordinator",
        "kv:x",
        "--budget-lease",
        "1s",
        "--budget-period",
        "1s",
      ],
      "--budget-lease (1000 ms) must be longer than --budget-period (1000 ms)",
    ],
    [
      ["--upstream", "http://x", "--coordinator-mode", "budget"],
      "--coordinator-mode needs --coordinator",
    ],
    [
      ["--upstream", "http://x", "--coordinator", "ws://c", "--coordinator-policy", "maybe"],
      '--coordinator-policy must be local, open or closed, got "maybe"',
    ],
    [
      ["--upstream", "http://x", "--coordinator", "ws://c", "--fallback-fraction", "1.5"],
      '--fallback-fraction must be a number in (0, 1], got "1.5"',
    ],
    [["--upstream", "http://x", "--fallback-fraction", "x"], "--fallback-fraction must be"],
    [
      ["--upstream", "http://x", "--coordinator-policy", "open"],
      "--coordinator-policy needs --coordinator",
    ],
    [
      ["--upstream", "http://x", "--fallback-fraction", "0.5"],
      "--fallback-fraction needs --coordinator",
    ],
    [["--upstream", "http://x", "extra"], "unexpected argument extra"],
  ];
  for (const [args, message] of cases) {
    const { code, stdout, stderr } = await run(["serve", ...args]);
    assert.equal(code, 2, args.join(" "));
    assert.equal(stdout, "");
    assert.ok(stderr.includes(message), `${args.join(" ")}: ${stderr}`);
    assert.ok(stderr.endsWith(`usage: ${SERVE_USAGE}\n`), stderr);
  }
});

Deno.test("apf serve refuses an invalid configuration with exit 1", async () => {
  const { code, stderr } = await run(
    ["serve", "--upstream", "http://127.0.0.1:1", "--config", "bad.yaml"],
    {
      "bad.yaml":
        "apiVersion: flowcontrol.apiserver.k8s.io/v1\nkind: FlowSchema\nmetadata: {name: x}\nspec: {}\n",
    },
  );
  assert.equal(code, 1);
  assert.match(stderr, /^FlowSchema\/x: spec\./);
});

Deno.test("listen addresses and upstream URLs", () => {
  assert.deepEqual(parseHostPort("127.0.0.1:0"), { hostname: "127.0.0.1", port: 0 });
  assert.deepEqual(parseHostPort("[::1]:9090"), { hostname: "::1", port: 9090 });
  assert.deepEqual(parseHostPort(":8080"), { hostname: "0.0.0.0", port: 8080 });
  assert.deepEqual(parseHostPort("localhost:65535"), { hostname: "localhost", port: 65535 });
  for (const bad of ["8080", "h:", "h:65536", "::1:80", "h:p", "a b:1", "http://h:1"]) {
    assert.equal(parseHostPort(bad), undefined, bad);
  }
  assert.equal(parseUpstream("https://api.example/v1/")?.href, "https://api.example/v1/");
  for (const bad of ["localhost:3000", "ws://h", "http://h/#f", "http://h/?", "http://u@h"]) {
    assert.equal(parseUpstream(bad), undefined, bad);
  }
});

Deno.test("apf serve, black box: proxies, serves admin routes apart, drains on SIGTERM, exits 0", async () => {
  await using upstream = testUpstream({ sleepMs: 300 });
  await using apf = spawnApf([
    "serve",
    "--upstream",
    upstream.url,
    "--listen",
    "127.0.0.1:0",
    "--admin-listen",
    "127.0.0.1:0",
    "--trust-identity-headers",
    "--request-timeout",
    "30s",
  ]);
  const { child, stdout, stderr, seen } = apf;
  const [, port] = await readUntil(
    stdout,
    /apf serve: listening on http:\/\/127\.0\.0\.1:(\d+), proxying to /,
    seen,
  );
  const [, adminPort, dashboard] = await readUntil(
    stdout,
    /apf serve: admin routes on http:\/\/127\.0\.0\.1:(\d+) .*; live dashboard: (\S+)\n/,
    seen,
  );
  assert.equal(dashboard, `http://127.0.0.1:${adminPort}/debug/api_priority_and_fairness/`);
  const res = await fetch(`http://127.0.0.1:${port}/hello?x=1`, {
    headers: { "X-Remote-User": "alice" },
  });
  assert.equal(res.status, 200);
  assert.equal(await res.text(), "ok /hello");
  assert.ok(res.headers.get("X-Kubernetes-PF-PriorityLevel-UID"));
  const metrics = await fetch(`http://127.0.0.1:${adminPort}/metrics`);
  assert.match(await metrics.text(), /apiserver_flowcontrol_dispatched_requests_total/);

  // A request in flight when SIGTERM arrives is still answered.
  const inFlight = fetch(`http://127.0.0.1:${port}/slow`).then(async (r) => [
    r.status,
    await r.text(),
  ]);
  while (upstream.active < 1) await sleep(5);
  child.kill("SIGTERM");
  assert.deepEqual(await inFlight, [200, "ok /slow"]);
  const status = await child.status;
  await readUntil(stdout, /apf serve: stopped\n/, seen).catch(() => null);
  assert.equal(status.code, 0, await stderr);
  assert.match(seen.text, /shutting down, letting in-flight requests finish\n/);
  assert.match(seen.text, /apf serve: stopped\n$/);
  assert.equal(await stderr, "");
});

Deno.test("apf serve --server-concurrency auto: the start-up line says so, and /metrics shows the learned limit", async () => {
  await using upstream = testUpstream({});
  await using apf = spawnApf([
    "serve",
    "--upstream",
    upstream.url,
    "--listen",
    "127.0.0.1:0",
    "--admin-listen",
    "127.0.0.1:0",
    "--server-concurrency",
    "auto",
    "--server-concurrency-initial",
    "12",
  ]);
  const { child, stdout, seen } = apf;
  const [, port] = await readUntil(
    stdout,
    /listening on http:\/\/127\.0\.0\.1:(\d+), proxying to \S+ \(8 priority levels, server concurrency auto \(learned between 3 and 1000, starting at 12\)\)\n/,
    seen,
  );
  const [, adminPort] = await readUntil(
    stdout,
    /admin routes on http:\/\/127\.0\.0\.1:(\d+) /,
    seen,
  );
  const res = await fetch(`http://127.0.0.1:${port}/hello`);
  assert.equal(await res.text(), "ok /hello");
  const metrics = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
  // 12 for the first second, then 3 while the minRTT is measured (no traffic ends it here).
  assert.match(metrics, /^apf_adaptive_concurrency_limit (12|3)$/m);
  child.kill("SIGTERM");
  assert.equal((await child.status).code, 0);
});

Deno.test("apf classify and apf config print take a number, not auto", async () => {
  const { code, stderr } = await run(["config", "print", "--server-concurrency", "auto"]);
  assert.equal(code, 2);
  assert.match(stderr, /--server-concurrency auto is for apf serve/);
});

Deno.test("apf serve exits 1 at start when the coordinator refuses its token, without printing it", async () => {
  const refused: string[] = [];
  await using coordinator = serveCoordinator({
    listen: { hostname: "127.0.0.1", port: 0 },
    token: "the-right-token-0123",
    onRefusedHandshake: (client) => refused.push(client),
  });
  const { code, stdout, stderr } = await run([
    "serve",
    "--upstream",
    "http://127.0.0.1:9",
    "--listen",
    "127.0.0.1:0",
    "--coordinator",
    `ws://127.0.0.1:${coordinator.addr.port}`,
    "--coordinator-token-file",
    "token",
    "--coordinator-policy",
    "open",
  ], { token: "a-wrong-token-456789\n" });
  assert.equal(code, 1);
  assert.equal(stdout, "", "it never listened");
  assert.match(
    stderr,
    /^apf serve: The coordinator at ws:\/\/127\.0\.0\.1:\d+\/ refused this client's token: wrong or missing token; check --coordinator-token-file token\n$/,
  );
  assert.ok(!stderr.includes("a-wrong-token"));
  assert.deepEqual(refused, ["apf serve"]);
});

Deno.test('apf serve: an upstream error names the target and the cause, not only "fetch failed"', async () => {
  const port = closedPort();
  await using apf = spawnApf([
    "serve",
    "--upstream",
    `http://127.0.0.1:${port}/base`,
    "--listen",
    "127.0.0.1:0",
  ]);
  const [, gw] = await readUntil(apf.stdout, /listening on http:\/\/127\.0\.0\.1:(\d+)/, apf.seen);
  const res = await fetch(`http://127.0.0.1:${gw}/x?secret=1`);
  assert.equal(res.status, 502);
  await res.body?.cancel();
  await stopApf(apf);
  const err = await apf.stderr;
  assert.match(
    err,
    new RegExp(
      `apf serve: upstream error: GET http://127\\.0\\.0\\.1:${port}/base/x: .*Connection refused`,
    ),
  );
  assert.ok(!err.includes("secret"), "the query stays out of the log");
});

for (const client of ["http1", "fetch"] as const) {
  Deno.test(`apf serve (${client}): a response body the upstream cuts short is logged as the upstream's error, not the gateway's`, async () => {
    await using upstream = rawUpstream(async (_req, conn) => {
      await conn.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhello");
      await sleep(20);
      conn.close();
    });
    await using apf = spawnApf([
      "serve",
      "--upstream",
      upstream.url,
      "--listen",
      "127.0.0.1:0",
      "--upstream-client",
      client,
    ]);
    const [, gw] = await readUntil(
      apf.stdout,
      /listening on http:\/\/127\.0\.0\.1:(\d+)/,
      apf.seen,
    );
    const res = await fetch(`http://127.0.0.1:${gw}/cut`);
    assert.equal(res.status, 200, "the head went out before the body was cut");
    await assert.rejects(res.arrayBuffer());
    await stopApf(apf);
    const err = await apf.stderr;
    assert.match(
      err,
      new RegExp(
        `^apf serve: upstream error: GET ${upstream.url}/cut: the upstream's response body failed before its end: .+$`,
        "m",
      ),
    );
    assert.doesNotMatch(err, /handler failed/);
  });
}

const tlsFixture = (name: string) => new URL(`../fixtures/tls/${name}`, import.meta.url).pathname;

for (const client of ["http1", "fetch"] as const) {
  Deno.test(`apf serve (${client}): an HTTPS upstream signed by a private CA is verified with DENO_CERT, and refused without it`, async () => {
    const upstream = Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      cert: Deno.readTextFileSync(tlsFixture("test_only_127.0.0.1.pem")),
      key: Deno.readTextFileSync(tlsFixture("test_only_127.0.0.1.key.pem")),
      onListen: () => {},
      onError: () => new Response(null, { status: 500 }),
    }, (req) => new Response(`tls ${new URL(req.url).pathname}`));
    try {
      for (const trusted of [true, false]) {
        await using apf = spawnApf([
          "serve",
          "--upstream",
          `https://127.0.0.1:${upstream.addr.port}`,
          "--listen",
          "127.0.0.1:0",
          "--upstream-client",
          client,
        ], trusted ? { env: { DENO_CERT: tlsFixture("test_only_ca.pem") } } : {});
        const [, gw] = await readUntil(
          apf.stdout,
          /listening on http:\/\/127\.0\.0\.1:(\d+)/,
          apf.seen,
        );
        const res = await fetch(`http://127.0.0.1:${gw}/secure`);
        if (trusted) {
          assert.equal(res.status, 200);
          assert.equal(await res.text(), "tls /secure");
        } else {
          // An unknown issuer is an upstream error, said so in the log: never a plain-text retry.
          assert.equal(res.status, 502);
          await res.body?.cancel();
        }
        await stopApf(apf);
        const err = await apf.stderr;
        if (!trusted) {
          assert.match(
            err,
            /apf serve: upstream error: GET https:\/\/127\.0\.0\.1:\d+\/secure: .+/,
          );
        }
      }
    } finally {
      await upstream.shutdown();
    }
  });
}

Deno.test("apf serve and apf coordinator name the address and the flag when it is taken", async () => {
  using busy = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const taken = `127.0.0.1:${(busy.addr as Deno.NetAddr).port}`;
  const main = await run(["serve", "--upstream", "http://127.0.0.1:3000", "--listen", taken]);
  assert.equal(main.code, 1);
  assert.match(
    main.stderr,
    new RegExp(`^apf serve: Cannot listen on ${taken} \\(--listen\\): Address already in use`),
  );
  const admin = await run([
    "serve",
    "--upstream",
    "http://127.0.0.1:3000",
    "--listen",
    "127.0.0.1:0",
    "--admin-listen",
    taken,
  ]);
  assert.equal(admin.code, 1);
  assert.match(admin.stderr, new RegExp(`Cannot listen on ${taken} \\(--admin-listen\\)`));
  const coordinator = await run(["coordinator", "--listen", taken]);
  assert.equal(coordinator.code, 1);
  assert.match(
    coordinator.stderr,
    new RegExp(
      `^apf coordinator: Cannot listen on ${taken} \\(--listen\\): Address already in use`,
    ),
  );
});
