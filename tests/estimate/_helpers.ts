import { describeRequest } from "../../src/classify/request_info.ts";
import type { ObjectCountSource, ObjectStats } from "../../src/estimate/object_count_tracker.ts";
import type { EstimateInput } from "../../src/estimate/types.ts";
import type { WatchCountSource } from "../../src/estimate/watch_tracker.ts";

/** The estimator input for `method url` (path with optional query) on a level with `maxSeats`. */
export function input(method: string, url: string, maxSeats: number): EstimateInput {
  const mark = url.indexOf("?");
  const base: EstimateInput = {
    requestInfo: describeRequest(method, url),
    method,
    flowSchema: "testFS",
    priorityLevel: "testPL",
    maxSeats,
  };
  return mark < 0 ? base : { ...base, query: url.slice(mark + 1) };
}

/** An object-count source answering `answer` for every key, recording the keys asked. */
export function fixedCounts(
  answer: ObjectStats | undefined | "stale" | (() => never),
): ObjectCountSource & { keys: string[] } {
  const keys: string[] = [];
  return {
    keys,
    get(key: string) {
      keys.push(key);
      return typeof answer === "function" ? answer() : answer;
    },
  };
}

/** A watch-count source answering `n` for every request. */
export function fixedWatches(n: number): WatchCountSource {
  return { interestedWatchCount: () => n };
}
