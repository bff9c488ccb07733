/** Polling for the Cloudflare tests: workerd runs on the real clock. */

import assert from "node:assert/strict";
import { sleep } from "../_helpers/real_time.ts";

/** Polls `read` every 10 ms until `done` holds of its value; fails after `timeoutMs`. */
export async function eventually<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 3_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) assert.fail(`still ${JSON.stringify(value)}`);
    await sleep(10);
  }
}
