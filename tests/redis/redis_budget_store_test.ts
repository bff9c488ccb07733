/**
 * The Redis engine against a real `redis-server` on loopback (each test
 * starts its own and stops it): the budget store conformance suite, bad
 * input and keys that hold no ledger, the script cache flushed, a restart
 * that lost the data, a refused credential, a stopped and a frozen server,
 * and TLS. Ignored, with a word, where redis-server is not installed.
 */

import assert from "node:assert/strict";
import type { Ledger } from "../../src/budgets/ledger.ts";
import { ledger } from "../_helpers/budget_store_conformance.ts";
import { StoreRefusedError } from "../../src/budgets/store.ts";
import { RedisBudgetStore, type RedisBudgetStoreOptions } from "../../src/redis/mod.ts";
import { budgetStoreConformance } from "../_helpers/budget_store_conformance.ts";
import { within } from "../_helpers/real_time.ts";
import {
  REDIS_MISSING,
  redisCli,
  type RedisServer,
  type RedisServerOptions,
  startRedis,
  TEST_CA,
} from "../_helpers/redis_server.ts";

if (REDIS_MISSING) {
  console.warn(
    "redis-server is not installed (apt-get install redis-server): the tests of tests/redis/ that need it are ignored",
  );
}

/** Runs `fn` with a fresh server and a store on it; closes both after. */
function withRedis(
  title: string,
  fn: (server: RedisServer, store: RedisBudgetStore) => Promise<void>,
  options: { server?: RedisServerOptions; store?: Partial<RedisBudgetStoreOptions> } = {},
): void {
  Deno.test({
    name: `Redis store: ${title}`,
    ignore: REDIS_MISSING,
    fn: async () => {
      const server = await startRedis(options.server);
      const store = new RedisBudgetStore({ url: server.url, timeoutMs: 1_000, ...options.store });
      try {
        await fn(server, store);
      } finally {
        await store.close();
        await server.stop();
      }
    },
  });
}

budgetStoreConformance("Redis", async () => {
  const server = await startRedis();
  const store = new RedisBudgetStore(server.url);
  return {
    store,
    async close() {
      await store.close();
      await server.stop();
    },
  };
}, { ignore: REDIS_MISSING });

withRedis("each level is one hash under the prefix: its version and its ledger", async (server) => {
  const store = new RedisBudgetStore({ url: server.url, prefix: "mine:" });
  try {
    assert.equal(await store.write("workload-low", null, ledger(3)), true);
    const { version } = (await store.read("workload-low"))!;
    assert.equal(await redisCli(server, "TYPE", "mine:workload-low"), "hash");
    assert.equal(await redisCli(server, "HGET", "mine:workload-low", "version"), version);
    assert.deepEqual(
      JSON.parse(await redisCli(server, "HGET", "mine:workload-low", "ledger")),
      ledger(3),
    );
    // The default prefix is another key space.
    const plain = new RedisBudgetStore(server.url);
    assert.equal(await plain.read("workload-low"), null);
    await plain.write("workload-low", null, ledger(1));
    await plain.close();
    assert.equal(await redisCli(server, "EXISTS", "apf:budgets:workload-low"), "1");
    // The database of the URL's path.
    const second = new RedisBudgetStore(`${server.url}/2`);
    await second.write("in-db-2", null, ledger(1));
    await second.close();
    assert.equal(await redisCli(server, "-n", "2", "EXISTS", "apf:budgets:in-db-2"), "1");
    assert.equal(await redisCli(server, "EXISTS", "apf:budgets:in-db-2"), "0");
  } finally {
    await store.close();
  }
});

withRedis("bad input is refused with a clear error and writes nothing", async (server, store) => {
  await assert.rejects(store.write("w", "", ledger(1)), /expected must be a version read or null/);
  const bad = { ...ledger(1).holders.h1!, claim: -1 };
  await assert.rejects(
    store.write("w", null, { holders: { h: bad } }),
    /Cannot write the budget ledger of "w": not a budget ledger at holders\.h\.claim: .*>=0/,
  );
  await assert.rejects(store.write("w", null, {} as Ledger), /not a budget ledger at holders/);
  await assert.rejects(store.write("", null, ledger(1)), /the level must be a non-empty string/);
  await assert.rejects(store.read(7 as never), TypeError);
  assert.equal(await redisCli(server, "DBSIZE"), "0", "nothing was written");
});

withRedis(
  "a key that holds no ledger reads as none or as suspects; one of another type is an error",
  async (server, store) => {
    // A ledger without a version: nothing to write over (the script compares with none).
    await redisCli(server, "HSET", "apf:budgets:a", "ledger", '{"holders":{}}');
    assert.equal(await store.read("a"), null);
    assert.equal(await store.write("a", null, ledger(1)), true);
    await redisCli(server, "HSET", "apf:budgets:b", "version", "v1", "ledger", "{not json");
    const b = await store.read("b");
    assert.deepEqual(b, {
      ledger: { holders: {} },
      suspects: [{ id: "(ledger)", reason: "not a budget ledger (no holders)", seats: 0 }],
      version: "v1",
    });
    await redisCli(
      server,
      "HSET",
      "apf:budgets:c",
      "version",
      "v1",
      "ledger",
      '{"holders":{"x":{"claim":1,"demand":1,"limit":"4","expiresAt":0}}}',
    );
    const c = await store.read("c");
    assert.equal(c!.suspects?.[0]?.id, "x");
    assert.match(c!.suspects![0]!.reason, /at limit: .*string/);
    assert.equal(await store.write("c", "v1", ledger(2)), true, "written over the version read");
    await redisCli(server, "SET", "apf:budgets:d", "a string");
    await assert.rejects(store.read("d"), /Cannot read the budget ledger of "d".*WRONGTYPE/);
    await assert.rejects(store.write("d", null, ledger(1)), /Cannot write .*WRONGTYPE/);
    assert.equal(await redisCli(server, "GET", "apf:budgets:d"), "a string", "left as it was");
  },
);

withRedis(
  "the write script is loaded again once the server's script cache is flushed",
  async (server, store) => {
    assert.equal(await store.write("s", null, ledger(1)), true);
    await redisCli(server, "SCRIPT", "FLUSH");
    const { version } = (await store.read("s"))!;
    assert.equal(await store.write("s", version, ledger(2)), true, "EVAL after NOSCRIPT");
    assert.deepEqual((await store.read("s"))!.ledger, ledger(2));
  },
);

withRedis(
  "a version read before a restart that lost the data never matches again",
  async (server, store) => {
    assert.equal(await store.write("r", null, ledger(1)), true);
    const before = (await store.read("r"))!.version;
    await server.restart();
    assert.equal(await store.read("r"), null, "the data is gone; the store reconnected");
    assert.equal(await store.write("r", null, ledger(2)), true);
    assert.notEqual((await store.read("r"))!.version, before);
    assert.equal(await store.write("r", before, ledger(3)), false, "a stale version");
    assert.deepEqual((await store.read("r"))!.ledger, ledger(2));
  },
);

withRedis(
  "a wrong or missing password is a StoreRefusedError naming host:port, never the password",
  async (server) => {
    const secret = "wrong-s3cret-Zx";
    const wrong = new RedisBudgetStore(`redis://:${secret}@127.0.0.1:${server.port}`);
    const none = new RedisBudgetStore(server.url);
    const right = new RedisBudgetStore(`redis://:right-pass@127.0.0.1:${server.port}/0`);
    try {
      const refusal = await wrong.read("x").then(() => null, (e) => e);
      assert.ok(refusal instanceof StoreRefusedError, String(refusal));
      assert.match(
        refusal.message,
        new RegExp(`redis://127\\.0\\.0\\.1:${server.port}.*WRONGPASS`),
      );
      assert.ok(!refusal.message.includes(secret), refusal.message);
      assert.equal(wrong.where, `redis://127.0.0.1:${server.port}`);
      await assert.rejects(wrong.write("x", null, ledger(1)), StoreRefusedError);
      await assert.rejects(
        none.read("x"),
        (e) => e instanceof StoreRefusedError && /NOAUTH/.test(e.message),
      );
      assert.equal(await right.write("x", null, ledger(1)), true, "the right password works");
    } finally {
      await Promise.all([wrong.close(), none.close(), right.close()]);
    }
  },
  { server: { password: "right-pass" } },
);

withRedis(
  "with the server stopped, operations reject at once; they work again once it is back",
  async (server, store) => {
    assert.equal(await store.write("o", null, ledger(1)), true);
    await server.stop();
    const failure = await within(store.read("o").then(() => null, (e) => e), 500, "read rejects");
    assert.ok(failure instanceof Error && !(failure instanceof StoreRefusedError), String(failure));
    assert.match(failure.message, /Cannot read the budget ledger of "o": the store at redis:\/\//);
    await within(assert.rejects(store.write("o", null, ledger(2))), 500, "write rejects");
    await within(assert.rejects(store.read("o")), 500, "read rejects again");
    await server.restart();
    assert.equal(await store.read("o"), null, "back, without the data it lost");
    assert.equal(await store.write("o", null, ledger(3)), true);
  },
);

withRedis(
  "a server that does not answer fails each operation after timeoutMs",
  async (server, store) => {
    assert.equal(await store.write("f", null, ledger(1)), true);
    server.pause();
    try {
      const started = performance.now();
      await within(
        assert.rejects(store.read("f"), /did not answer within 200 ms/),
        1_000,
        "timeout",
      );
      assert.ok(performance.now() - started >= 190);
      await within(assert.rejects(store.read("f"), /did not answer within 200 ms/), 1_000, "again");
    } finally {
      server.resume();
    }
    assert.deepEqual((await store.read("f"))!.ledger, ledger(1), "a new connection answers");
  },
  { store: { timeoutMs: 200 } },
);

withRedis(
  "over TLS (rediss://) with the CA in caCerts; a certificate not trusted is an outage",
  async (server) => {
    const trusted = new RedisBudgetStore({ url: server.url, caCerts: [TEST_CA] });
    const untrusted = new RedisBudgetStore(server.url);
    try {
      assert.equal(server.url.startsWith("rediss://"), true);
      assert.equal(await trusted.write("t", null, ledger(1)), true);
      assert.deepEqual((await trusted.read("t"))!.ledger, ledger(1));
      const failure = await untrusted.read("t").then(() => null, (e) => e);
      assert.ok(
        failure instanceof Error && !(failure instanceof StoreRefusedError),
        String(failure),
      );
      assert.match(failure.message, /certificate/);
    } finally {
      await Promise.all([trusted.close(), untrusted.close()]);
    }
  },
  { server: { tls: true } },
);

withRedis("after close, operations reject", async (_server, store) => {
  assert.equal(await store.read("c"), null);
  await store.close();
  await assert.rejects(store.read("c"), /is closed/);
});

Deno.test("Redis store: options are checked, and a password never shows in a message", () => {
  const secret = "hunter2-Qq";
  assert.throws(() => new RedisBudgetStore(`http://:${secret}@h`), (e: Error) => {
    assert.ok(e instanceof TypeError);
    assert.match(e.message, /must start with redis:\/\/ or rediss:\/\//);
    assert.ok(!e.message.includes(secret), e.message);
    return true;
  });
  assert.throws(() => new RedisBudgetStore(`redis://:${secret}@h:99999`), (e: Error) => {
    assert.ok(!e.message.includes(secret), e.message);
    return true;
  });
  assert.throws(() => new RedisBudgetStore("redis://h/db"), /the path must be the database number/);
  assert.throws(() => new RedisBudgetStore("redis://h?tls=1"), /no query or fragment/);
  assert.throws(() => new RedisBudgetStore(42 as never), /expected a URL or options, got 42/);
  assert.throws(
    () => new RedisBudgetStore({ url: "redis://h", timeout: 5 } as never),
    /unknown option "timeout" \(did you mean "timeoutMs"\?\)/,
  );
  assert.throws(() => new RedisBudgetStore({ url: "redis://h", timeoutMs: 0 }), RangeError);
  assert.throws(() => new RedisBudgetStore({ url: "redis://h", prefix: 1 as never }), TypeError);
  assert.throws(
    () => new RedisBudgetStore({ url: "redis://h", caCerts: "pem" as never }),
    TypeError,
  );
  assert.equal(new RedisBudgetStore(`redis://u:${secret}@[::1]/3`).where, "redis://[::1]:6379");
  assert.equal(
    new RedisBudgetStore("rediss://cache.example:6380").where,
    "rediss://cache.example:6380",
  );
});

/**
 * The npm packages `entry`'s module graph imports statically (a dynamic
 * `import()` loads its module only when it runs).
 */
async function npmPackagesOf(entry: string): Promise<string[]> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", "--lock=deno.lock", entry],
    cwd: new URL("../../", import.meta.url),
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(output.success, new TextDecoder().decode(output.stderr));
  interface Dependency {
    code?: { specifier: string };
    isDynamic?: boolean;
  }
  const graph = JSON.parse(new TextDecoder().decode(output.stdout)) as {
    roots: string[];
    redirects?: Record<string, string>;
    modules: {
      kind?: string;
      specifier: string;
      npmPackage?: string;
      dependencies?: Dependency[];
    }[];
  };
  const bySpecifier = new Map(graph.modules.map((m) => [m.specifier, m]));
  const packages = new Set<string>();
  const seen = new Set<string>();
  const walk = (specifier: string): void => {
    const resolved = graph.redirects?.[specifier] ?? specifier;
    if (seen.has(resolved)) return;
    seen.add(resolved);
    const m = bySpecifier.get(resolved);
    if (m === undefined) return;
    if (m.kind === "npm" && m.npmPackage) packages.add(m.npmPackage);
    for (const d of m.dependencies ?? []) {
      if (d.isDynamic !== true && d.code !== undefined) walk(d.code.specifier);
    }
  };
  for (const root of graph.roots) walk(root);
  return [...packages];
}

Deno.test("Redis store: only the ./redis entry imports the Redis client; the apf command loads it only for a redis: store", async () => {
  const redisClient = (packages: string[]) => packages.some((p) => p.startsWith("@redis/client@"));
  assert.ok(redisClient(await npmPackagesOf("src/redis/mod.ts")));
  assert.ok(!redisClient(await npmPackagesOf("src/cli/main.ts")), "src/cli/main.ts");
  assert.ok(!redisClient(await npmPackagesOf("mod.ts")), "mod.ts");
});
