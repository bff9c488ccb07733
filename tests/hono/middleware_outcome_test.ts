/**
 * `apf()` states how the work ended with the release of every seat
 * (`ReleaseOptions.outcome`, `docs/adaptive.md`), not only of the seats of
 * its own learned limit: a seat of a coordinator of one's own, as a remote
 * coordinator's is, carries it to the coordinator that learns.
 */

import assert from "node:assert/strict";
import { Hono } from "hono";
import { frontProxyIdentity } from "../../mod.ts";
import { apf, type ApfEnv } from "../../src/hono/mod.ts";
import { recordingCoordinator } from "../_helpers/recording_coordinator.ts";
import { tinyConfig } from "./_helpers.ts";

const dev = { headers: { "X-Remote-User": "alice", "X-Remote-Group": "dev" } };

Deno.test("apf() releases any coordinator's seat with the outcome its response says", async () => {
  const recording = recordingCoordinator(tinyConfig());
  const limiter = apf({
    config: tinyConfig(),
    identify: frontProxyIdentity(),
    coordinator: recording.coordinator,
  });
  const app = new Hono<ApfEnv>();
  app.use(limiter);
  app.get("/status/:code", (c) => c.text("x", Number(c.req.param("code")) as 200));
  app.get("/throws", () => {
    throw new Error("the handler failed");
  });
  // A body still being made: the seat goes back when it ends, with the outcome of its status.
  app.get("/streamed/:code", (c) => {
    const chunks = ["a", "b"];
    const body = new ReadableStream<Uint8Array>({
      pull: (controller) => {
        const chunk = chunks.shift();
        if (chunk === undefined) controller.close();
        else controller.enqueue(new TextEncoder().encode(chunk));
      },
    });
    return new Response(body, { status: Number(c.req.param("code")) });
  });
  // A body that fails after its first chunk: whatever the status said, the work ended in an error.
  app.get("/broken/:code", (c) => {
    let sent = false;
    const body = new ReadableStream<Uint8Array>({
      pull: (controller) => {
        if (sent) controller.error(new Error("the body failed"));
        else controller.enqueue(new TextEncoder().encode("a"));
        sent = true;
      },
    });
    return new Response(body, { status: Number(c.req.param("code")) });
  });
  app.get("/watch", (c) => c.text("events", 200, { "Content-Type": "text/event-stream" }));
  app.onError((_, c) => c.text("Internal Server Error", 500));
  try {
    const statuses: number[] = [];
    for (
      const path of [
        "/status/200",
        "/status/404",
        "/status/503",
        "/status/429",
        "/status/504",
        "/status/500",
        "/throws",
        "/streamed/503",
        "/streamed/200",
        "/broken/200",
        "/watch",
      ]
    ) {
      const res = await app.request(path, dev);
      statuses.push(res.status);
      await res.text().catch(() => {});
    }
    assert.deepEqual(statuses, [200, 404, 503, 429, 504, 500, 500, 503, 200, 200, 200]);
    assert.deepEqual(recording.ends, [
      { outcome: "ok" },
      { outcome: "ok" }, // the upstream did the work: a 404 is as informative as a 200
      { outcome: "rejected" },
      { outcome: "rejected" },
      { outcome: "timeout" },
      { outcome: "error" },
      { outcome: "error" },
      { outcome: "rejected" },
      { outcome: "ok" },
      { outcome: "error" }, // a 200 whose body failed
      "initialized", // long-running: given back early, no sample
    ]);
  } finally {
    limiter.close();
    recording.close();
  }
});
