/**
 * Retry-After per priority level (spec §7.4): Kubernetes' dropped-requests
 * tracker. Provisional port; replaced by the observe branch's version.
 *
 * @module
 */

interface LevelDrops {
  history: { unix: number; count: number }[];
  currentUnix: number;
  currentCount: number;
  retryAfter: number;
  lastIncreaseUnix: number;
}

const MAX_RETRY_AFTER = 32;

/** Tracks drops per level and derives each level's Retry-After (1 to 32 s). */
export class DroppedRequestsTracker {
  #levels = new Map<string, LevelDrops>();

  /** Records a dropped request of `priorityLevel` at integer Unix second `unixSeconds`. */
  recordDroppedRequest(priorityLevel: string, unixSeconds: number): void {
    let s = this.#levels.get(priorityLevel);
    if (s === undefined) {
      s = { history: [], currentUnix: 0, currentCount: 0, retryAfter: 1, lastIncreaseUnix: 0 };
      this.#levels.set(priorityLevel, s);
    }
    const u = unixSeconds;
    if (u === s.currentUnix) {
      s.currentCount++;
      return;
    }
    s.history.push({ unix: s.currentUnix, count: s.currentCount });
    const horizon = Math.min(2 * s.retryAfter, MAX_RETRY_AFTER);
    let drop = 0;
    while (drop < s.history.length && s.currentUnix - s.history[drop]!.unix > horizon) drop++;
    if (drop > 0) s.history.splice(0, drop);
    s.currentUnix = u;
    s.currentCount = 1;
    let dropped = 0;
    for (const e of s.history) {
      if (u - e.unix <= s.retryAfter && e.unix < u) dropped += e.count;
    }
    if (u - s.lastIncreaseUnix >= s.retryAfter && dropped >= 3 * s.retryAfter) {
      s.retryAfter = Math.min(2 * s.retryAfter, MAX_RETRY_AFTER);
      s.lastIncreaseUnix = u;
    } else if (dropped < s.retryAfter && s.retryAfter > 1) {
      s.retryAfter--;
    }
  }

  /** The Retry-After of `priorityLevel` in seconds: 1 when it never dropped a request. */
  retryAfter(priorityLevel: string): number {
    return this.#levels.get(priorityLevel)?.retryAfter ?? 1;
  }
}
