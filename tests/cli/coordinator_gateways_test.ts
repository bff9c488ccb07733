import assert from "node:assert/strict";
import { testUpstream } from "../deno/_helpers.ts";
import { readUntil, spawnApf } from "./_run.ts";

async function stop(p: ReturnType<typeof spawnApf>): Promise<number> {
  try {
    p.child.kill("SIGTERM");
  } catch {
    // it exited
  }
  const status = await p.child.status;
  await p.stdout.cancel();
  await p.stderr;
  return status.code;
}

Deno.test("black box: two apf serve gateways share one apf coordinator, and survive it going away", async () => {
  const upstream = testUpstream({ sleepMs: 5 });
  const coordinator = spawnApf(["coordinator", "--listen", "127.0.0.1:0"]);
  const gateways: ReturnType<typeof spawnApf>[] = [];
  try {
    const [, port] = await readUntil(
      coordinator.stdout,
      /listening on ws:\/\/127\.0\.0\.1:(\d+)/,
      coordinator.seen,
    );
    for (let i = 0; i < 2; i++) {
      gateways.push(spawnApf([
        "serve",
        "--upstream",
        upstream.url,
        "--listen",
        "127.0.0.1:0",
        "--coordinator",
        `ws://127.0.0.1:${port}`,
      ]));
    }
    const ports: string[] = [];
    for (const g of gateways) {
      const [, p] = await readUntil(g.stdout, /listening on http:\/\/127\.0\.0\.1:(\d+)/, g.seen);
      ports.push(p!);
    }
    for (const p of ports) {
      const res = await fetch(`http://127.0.0.1:${p}/hello`);
      assert.equal(res.status, 200, await res.text());
      assert.ok(res.headers.get("X-Kubernetes-PF-PriorityLevel-UID"));
    }
    // The coordinator goes away: the gateways fall back to their local limiter, without hanging.
    assert.equal(await stop(coordinator), 0);
    const started = Date.now();
    const res = await fetch(`http://127.0.0.1:${ports[0]}/again`);
    assert.equal(res.status, 200, await res.text());
    assert.ok(Date.now() - started < 5000);
    for (const g of gateways) assert.equal(await stop(g), 0);
  } finally {
    for (const p of [coordinator, ...gateways]) {
      try {
        p.child.kill("SIGKILL");
      } catch {
        // exited
      }
      await p.child.status;
    }
    await upstream.close();
  }
});
