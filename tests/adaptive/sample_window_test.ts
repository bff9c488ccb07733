import assert from "node:assert/strict";
import { MAX_WINDOW_SAMPLES, SampleWindow } from "../../src/adaptive/_sample_window.ts";
import { xorshift } from "../_helpers/closed_loop_upstream.ts";

Deno.test("SampleWindow: nearest-rank percentiles, refusals last", () => {
  const w = new SampleWindow(xorshift(1));
  assert.equal(w.percentile(0.9), null);
  for (const v of [5, 1, 4, 2, 3, 10, 9, 8, 7, 6]) w.add(v, undefined);
  assert.equal(w.percentile(0.9), 9);
  assert.equal(w.percentile(0.5), 5);
  assert.equal(w.percentile(1), 10);
  assert.equal(w.percentile(0.01), 1);
  w.add(Infinity, undefined);
  w.add(Infinity, undefined);
  assert.equal(w.percentile(0.9), Infinity); // 2 refusals of 12 are above the 90th percentile
  assert.equal(w.count, 12);
  assert.equal(w.maxDemand, null);
  w.add(1, 7);
  w.add(1, 3);
  assert.equal(w.maxDemand, 7);
  w.clear();
  assert.equal(w.count, 0);
  assert.equal(w.maxDemand, null);
  assert.equal(w.percentile(0.5), null);
});

Deno.test("SampleWindow keeps a uniform sample beyond its capacity", () => {
  const w = new SampleWindow(xorshift(9));
  const n = 20 * MAX_WINDOW_SAMPLES;
  // 0, 1, ..., n − 1 in a scrambled order: the p90 is about 0.9 n.
  for (let i = 0; i < n; i++) w.add((i * 7919) % n, undefined);
  assert.equal(w.count, n);
  const p90 = w.percentile(0.9)!;
  assert.ok(Math.abs(p90 / n - 0.9) < 0.01, `${p90 / n}`);
});
