/**
 * How a holder tells, on its own clock alone, which lines of a level's
 * ledger still count. Leases need bounded clock *rate* drift, never clocks
 * that agree (Gray and Cheriton, "Leases", SOSP 1989): so no decision here
 * compares a time another process wrote with this one's clock.
 *
 * - A line is live until this reader has seen it unchanged (the same
 *   `beat`, which its holder changes at every write) for its window: the
 *   lease, the drain time and the drift margin, each the larger of the
 *   line's and this reader's, measured on this reader's monotonic clock
 *   from the read in which it first saw that beat. A line first seen now
 *   gets the whole window, whatever its age: a reader with no history of a
 *   line waits that long before it takes the seats the line holds.
 *   Its holder stops admitting a lease after the start of its last write,
 *   on its own clock, and its requests end within the drain time; the reader
 *   saw the beat only after that write started; the margin covers the two
 *   clocks running at rates that differ a little.
 * - A line no holder of this configuration could have written (a
 *   {@linkcode SuspectLine}: a claim or limit above the level's most, a
 *   malformed shape) counts as a dead holder's line: while it is in the
 *   ledger, its seats (at most the level's most) are held, for one window
 *   at most from the read in which this reader first saw it, whatever it
 *   becomes; and it is never written back, so the first write after it
 *   drops it. A forgery written once is gone at the next write; one
 *   rewritten every period holds its seats for one window, then nothing.
 * - A recovery mark (a store that forgot the ledger, `ledger.ts`) is in
 *   force for one window from the read in which this reader first saw it.
 * - The capacity each of the reader's own settles granted, by the beat its
 *   write carries: in a recovery, the reader grows past what its last
 *   successful write granted by no seat (`ledger.ts`), and its claim may be
 *   more (seats in use that no write granted).
 *
 * @module
 */

import type { LedgerEntry, RecoveryMark } from "./ledger.ts";

/** A lease term, a drain time and a drift margin, in ms. */
export interface WindowTerms {
  /** How long a holder admits on its claim after the start of its last write. */
  leaseMs: number;
  /** How long a request admitted just before the lease ended may hold its seat. */
  drainMs: number;
  /** What covers clocks that run at slightly different rates (and store latency). */
  marginMs: number;
}

/** How long a line stays live after its last change, by the terms it and the reader run with. */
export function windowMs(
  line: Pick<LedgerEntry, "leaseMs" | "drainMs">,
  mine: WindowTerms,
): number {
  return Math.max(line.leaseMs, mine.leaseMs) + Math.max(line.drainMs, mine.drainMs) +
    mine.marginMs;
}

/** A line of a ledger that no holder could have written, and why. */
export interface SuspectLine {
  /** The line's holder id. */
  id: string;
  /** What is wrong with it. */
  reason: string;
  /** The seats it may hold: its claim when a number, at most the level's most. */
  seats: number;
}

/** What a reader makes of a ledger: the lines that count, and what to drop. */
export interface LedgerView {
  /** The valid lines still live, by id. */
  live: Record<string, LedgerEntry>;
  /** Valid lines whose window has passed (left out of the next write). */
  dead: string[];
  /** Seats held by suspect lines still within their window. */
  suspectSeats: number;
  /** Suspect lines seen for the first time (to report once). */
  newSuspects: SuspectLine[];
  /** The recovery mark in force for this reader, or `null`. */
  recovery: RecoveryMark | null;
  /** Whether that mark is seen for the first time. */
  newRecovery: boolean;
}

/** Suspect ids remembered per level (the oldest forgotten first). */
const MAX_SUSPECTS = 1_024;

/** One reader's memory of one level's ledger lines, and of its own grants. */
export class LineWatch {
  #lines = new Map<string, { beat: number; since: number }>();
  #suspects = new Map<string, number>();
  #marks = new Map<string, number>();
  #grants = new Map<number, number>();

  /**
   * Remembers that the reader's settle computed `capacity` for a write
   * carrying `beat`; forgets the grants of beats before `lastBeat`, its last
   * successful write's (settles run one at a time: a later one that reuses
   * a beat replaces a write that failed).
   */
  grant(beat: number, capacity: number, lastBeat: number): void {
    this.#grants.set(beat, capacity);
    for (const b of this.#grants.keys()) if (b < lastBeat) this.#grants.delete(b);
  }

  /** The capacity computed for the write carrying `beat`, or `null` if not known. */
  granted(beat: number): number | null {
    return this.#grants.get(beat) ?? null;
  }

  /**
   * Judges `holders` (the valid lines) and `suspects` read at `now` on this
   * reader's monotonic clock, leaving out `self`; remembers what it saw.
   */
  observe(
    ledger: {
      holders: Record<string, LedgerEntry>;
      recovery?: RecoveryMark | undefined;
    },
    suspects: readonly SuspectLine[],
    self: string,
    now: number,
    terms: WindowTerms,
  ): LedgerView {
    const view: LedgerView = {
      live: {},
      dead: [],
      suspectSeats: 0,
      newSuspects: [],
      recovery: null,
      newRecovery: false,
    };
    const present = new Set<string>();
    for (const [id, line] of Object.entries(ledger.holders)) {
      if (id === self) continue;
      present.add(id);
      let seen = this.#lines.get(id);
      if (seen === undefined || seen.beat !== line.beat) {
        seen = { beat: line.beat, since: now };
        this.#lines.set(id, seen);
      }
      if (now - seen.since > windowMs(line, terms)) view.dead.push(id);
      else view.live[id] = line;
    }
    for (const id of this.#lines.keys()) if (!present.has(id)) this.#lines.delete(id);

    const whole = terms.leaseMs + terms.drainMs + terms.marginMs;
    for (const suspect of suspects) {
      let since = this.#suspects.get(suspect.id);
      if (since === undefined) {
        since = now;
        this.#suspects.set(suspect.id, since);
        view.newSuspects.push(suspect);
        if (this.#suspects.size > MAX_SUSPECTS) {
          this.#suspects.delete(this.#suspects.keys().next().value!);
        }
      }
      if (now - since <= whole) view.suspectSeats += suspect.seats;
    }

    const mark = ledger.recovery;
    if (mark !== undefined) {
      let since = this.#marks.get(mark.id);
      if (since === undefined) {
        since = now;
        this.#marks.set(mark.id, since);
        view.newRecovery = true;
      }
      if (now - since <= whole) view.recovery = mark;
    }
    for (const id of this.#marks.keys()) if (id !== mark?.id) this.#marks.delete(id);
    return view;
  }
}
