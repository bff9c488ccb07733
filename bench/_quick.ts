import {
  bootstrapConfiguration,
  effectiveConfiguration,
  EmbeddedCoordinator,
  QueueSet,
  systemClock,
} from "../mod.ts";
import pLimit from "npm:p-limit@7";
const eff = effectiveConfiguration(bootstrapConfiguration());
const coord = new EmbeddedCoordinator(eff);
const req = {
  priorityLevel: "global-default",
  flowSchema: "global-default",
  flowHash: { hi: 1, lo: 2 },
  distinguisher: "alice",
};
const qs = new QueueSet({
  type: "Limited",
  concurrencyLimit: 64,
  queuing: { queues: 128, queueLengthLimit: 50, handSize: 6 },
});
const limit = pLimit(64);
const N = 500_000;
async function run(name: string, f: () => Promise<void>) {
  for (let r = 0; r < 3; r++) {
    const t0 = performance.now();
    for (let i = 0; i < N; i++) await f();
    const dt = performance.now() - t0;
    console.log(name, (N / dt * 1000 / 1e6).toFixed(2), "M pairs/s");
  }
}
const h = { hi: 1, lo: 2 };
await run("queueset", async () => {
  const r = qs.startRequest({ hash: h });
  r.finish();
});
await run("coordinator", async () => {
  const a = await coord.acquire(req);
  if (a.admitted) a.seat.release();
});
await run("p-limit", async () => {
  await limit(() => {});
});
coord.close();
