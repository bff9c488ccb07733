import assert from "node:assert/strict";
import { EmbeddedCoordinator } from "../../src/coordinator/embedded.ts";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import { configOf, limited } from "../_helpers/coordinator_config.ts";

Deno.test("begin() answers at once when it can, and with a promise only when the request queues", async () => {
  const clock = new FakeEventClock();
  const c = new EmbeddedCoordinator(
    configOf(2, [
      limited("q", { shares: 95, queuing: { queues: 1, handSize: 1, queueLengthLimit: 1 } }),
    ]),
    { clock },
  );
  const req = { priorityLevel: "q", flowSchema: "q" };
  const limit = c.snapshot().levels.find((l) => l.name === "q")!.currentLimit;
  const seats = [];
  for (let i = 0; i < limit; i++) {
    const a = c.begin(req);
    assert.ok(!(a instanceof Promise) && a.admitted, "admitted at once");
    seats.push(a.seat);
  }
  const queued = c.begin(req);
  assert.ok(queued instanceof Promise, "waits");
  const full = c.begin(req);
  assert.ok(!(full instanceof Promise) && !full.admitted && full.reason === "queue-full");
  const unknown = c.begin({ priorityLevel: "nope", flowSchema: "x" });
  assert.ok(!(unknown instanceof Promise) && !unknown.admitted && unknown.reason === "unavailable");
  assert.throws(() => c.begin(null as never), /request must be an object/);
  await assert.rejects(c.acquire(null as never), /request must be an object/);
  seats[0]!.release();
  const later = await queued;
  assert.ok(later.admitted);
  later.seat.release();
  for (const s of seats.slice(1)) s.release();
  c.close();
});
