/**
 * A release states how its seat's work ended (`ReleaseOptions.outcome`):
 * a seat of a static limit takes it and ignores it, a sampled seat records
 * it (over its `outcome` property, which still works for a release that
 * says nothing), and a value that is no outcome is refused, the seat still
 * held.
 */

import assert from "node:assert/strict";
import { SAMPLE_OUTCOMES, type SampleOutcome } from "../../src/adaptive/types.ts";
import { SampledSeat, type SampleSink } from "../../src/coordinator/adaptive_limit.ts";
import { EmbeddedCoordinator } from "../../src/coordinator/embedded.ts";
import {
  isSampleOutcome,
  RELEASED_AS,
  releaseOptions,
} from "../../src/coordinator/release_outcome.ts";
import type { Seat } from "../../src/coordinator/types.ts";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import { conformanceConfiguration } from "../_helpers/coordinator_config.ts";

const request = { priorityLevel: "queued", flowSchema: "fs-queued" };
const REFUSED =
  /^TypeError: Cannot release a seat: outcome must be one of "ok", "error", "rejected", "timeout", got "overload"$/;

function setup() {
  const clock = new FakeEventClock(1000);
  const coordinator = new EmbeddedCoordinator(conformanceConfiguration(), { clock });
  const seatsInUse = () =>
    coordinator.snapshot().levels.find((l) => l.name === "queued")!.queueSet.seatsInUse;
  const seat = async (): Promise<Seat> => {
    const a = await coordinator.acquire(request);
    assert.ok(a.admitted);
    return a.seat;
  };
  return { clock, coordinator, seatsInUse, seat };
}

Deno.test("a seat of a static limit takes an outcome and ignores it; one that is none is refused, the seat held", async () => {
  const { coordinator, seatsInUse, seat } = setup();
  const s = await seat();
  assert.throws(() => s.release({ outcome: "overload" as SampleOutcome }), REFUSED);
  assert.equal(seatsInUse(), 1, "still held");
  assert.equal(s.release({ outcome: "rejected" }), true);
  assert.equal(seatsInUse(), 0);
  coordinator.close();
});

Deno.test("a sampled seat records the outcome its release states, else its outcome property", async () => {
  const { clock, coordinator, seatsInUse, seat } = setup();
  const recorded: Array<[number, SampleOutcome, number | undefined]> = [];
  const sink: SampleSink = {
    record: (startedAt, outcome, executionMs) =>
      void recorded.push([startedAt, outcome, executionMs]),
  };
  const stated = new SampledSeat(await seat(), sink, clock.now());
  stated.outcome = "error";
  assert.throws(() => stated.release({ outcome: "overload" as SampleOutcome }), REFUSED);
  assert.equal(seatsInUse(), 1, "still held, nothing recorded");
  assert.deepEqual(recorded, []);
  clock.advance(10);
  assert.equal(stated.release({ outcome: "timeout", executionMs: 7 }), true);
  assert.equal(stated.release({ outcome: "ok" }), false, "released once, sampled once");
  const marked = new SampledSeat(await seat(), sink, clock.now());
  marked.outcome = "rejected";
  marked.release();
  const plain = new SampledSeat(await seat(), sink, clock.now());
  plain.release();
  const early = new SampledSeat(await seat(), sink, clock.now());
  early.initialized(); // long-running: no sample
  early.release({ outcome: "error" });
  assert.deepEqual(recorded, [
    [1000, "timeout", 7],
    [1010, "rejected", undefined],
    [1010, "ok", undefined],
  ]);
  assert.equal(seatsInUse(), 0);
  coordinator.close();
});

Deno.test("release options: one shared, frozen object per outcome alone; a new one with an execution time", () => {
  assert.equal(releaseOptions(undefined, undefined), undefined);
  assert.equal(releaseOptions(undefined, "rejected"), RELEASED_AS.rejected);
  assert.deepEqual(RELEASED_AS.rejected, { outcome: "rejected" });
  assert.ok(Object.isFrozen(RELEASED_AS) && Object.isFrozen(RELEASED_AS.ok));
  assert.deepEqual(releaseOptions(12, undefined), { executionMs: 12 });
  assert.deepEqual(releaseOptions(12, "timeout"), { executionMs: 12, outcome: "timeout" });
});

Deno.test("the outcome check takes exactly the SAMPLE_OUTCOMES, and RELEASED_AS has one of each", () => {
  for (const outcome of SAMPLE_OUTCOMES) {
    assert.ok(isSampleOutcome(outcome), outcome);
    assert.equal(RELEASED_AS[outcome].outcome, outcome);
  }
  assert.deepEqual(Object.keys(RELEASED_AS).sort(), [...SAMPLE_OUTCOMES].sort());
  for (const other of ["OK", "overload", "", undefined, null, 0, {}, ["ok"]]) {
    assert.equal(isSampleOutcome(other), false, String(other));
  }
});
