import assert from "node:assert/strict";
import { done, LIMIT, run, setup } from "./_holders.ts";

Deno.test("holder with a learned limit: each holder computes its levels' limits at its own learned ServerCL, and the ledger holds a level to the smallest of the live holders'", async () => {
  // h0 learns (it starts at 16 seats for a 3 s window, then pins 3 to measure its minRTT); h1 keeps
  // the configuration's 8.
  const s = setup(
    2,
    (_clock, i) =>
      i === 0 ? { serverConcurrencyLimit: { initial: 16, sampleWindowMs: 3_000 } } : {},
  );
  const [learning, fixed] = s.holders as [typeof s.holders[0], typeof s.holders[0]];
  try {
    await run(s, 2_000);
    assert.equal(learning.adaptiveSnapshot()!.limit, 16);
    assert.equal(fixed.adaptiveSnapshot(), null);
    // `work` at ServerCL 16 is 8 seats for h0, 4 at 8 for h1: both hold it to 4.
    assert.deepEqual(s.holders.map((h) => h.budgets()[0]!.limit), [LIMIT, LIMIT]);
    await run(s, 2_000);
    assert.equal(learning.adaptiveSnapshot()!.phase, "measuring-min-rtt");
    assert.equal(learning.snapshot().levels.find((l) => l.name === "work")!.nominalLimit, 2);
    // At the pin's 3 seats h0 computes 2: now the smallest, for both.
    assert.deepEqual(s.holders.map((h) => h.budgets()[0]!.limit), [2, 2]);
    assert.match(learning.metrics.registry.expose(), /^apf_adaptive_concurrency_limit 3$/m);
  } finally {
    done(s);
  }
});

Deno.test("holder: serverConcurrencyLimit is checked like apf()'s", () => {
  assert.throws(() => setup(1, { serverConcurrencyLimit: { initial: 0 } }), { name: "RangeError" });
  assert.throws(() => setup(1, { serverConcurrencyLimit: "automatic" as never }), {
    name: "TypeError",
  });
});
