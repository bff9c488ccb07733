/**
 * The upstream of a simulation: a pool of K workers, each serving one
 * request at a time for a work time S, with a first-come first-served
 * queue in front (what a thread pool or a process pool does). With n
 * requests inside and n > K, a request waits for a worker and takes about
 * S·n/K in all: latency grows with what the upstream holds, which is what a
 * latency-driven controller reads. K may change during the run (a deploy, a
 * smaller instance).
 *
 * It measures what the goals are stated in: requests in flight
 * inside it (time-weighted percentiles) and throughput against its capacity
 * K/S, per phase of constant K, once the phase has settled.
 *
 * @module
 */

import type { Clock, Timer } from "../fairqueuing/clock.ts";
import { TimeHistogram } from "./_time_histogram.ts";

/** K changes to `workers` at `atMs`. */
export interface UpstreamChange {
  /** When, in ms of simulated time. */
  atMs: number;
  /** The new number of workers (integer ≥ 1). */
  workers: number;
}

/** A worker-pool upstream, every default filled in. */
export interface UpstreamScenario {
  /** Workers at the start (K, integer ≥ 1). */
  workers: number;
  /** Work time of a request in a worker (S), in ms. */
  workMs: number;
  /** Each work time is `workMs × (1 ± jitter)`, uniformly ([0, 1); 0: exact). */
  jitter: number;
  /** Changes of K, in time order. */
  changes: UpstreamChange[];
}

/** Time-weighted statistics of the requests inside the upstream. */
export interface InFlightSummary {
  /** Median. */
  p50: number;
  /** 90th percentile. */
  p90: number;
  /** Time-weighted mean. */
  mean: number;
  /** Highest. */
  max: number;
}

/** What the upstream did during one phase of constant K, once settled. */
export interface UpstreamPhaseResult {
  /** When the phase began, in ms. */
  fromMs: number;
  /** When it ended (the next change, or the end of the run), in ms. */
  toMs: number;
  /** K during the phase. */
  workers: number;
  /** Start of the settled part: `fromMs` + the settling time, at most `toMs`. */
  settledFromMs: number;
  /** Requests completed in the settled part. */
  completed: number;
  /** Their rate, per second. */
  throughputPerSecond: number;
  /** The rate as a fraction of the capacity K/S. */
  throughputRatio: number;
  /** Requests inside the upstream during the settled part. */
  inFlight: InFlightSummary;
}

/** What the upstream did over the run. */
export interface UpstreamResult {
  /** Requests completed from 0 to the duration. */
  completed: number;
  /** Requests inside it from 0 to the duration. */
  inFlight: InFlightSummary;
  /** Each phase of constant K. */
  phases: UpstreamPhaseResult[];
}

/** How long after a change of K the upstream's statistics count as settled: the 10 s. */
export const UPSTREAM_SETTLE_MS = 10_000;

interface Phase {
  fromMs: number;
  toMs: number;
  workers: number;
  settledFromMs: number;
  completed: number;
  inFlight: TimeHistogram;
}

/** Options of {@linkcode WorkerPoolUpstream}. */
export interface WorkerPoolUpstreamOptions {
  /** The simulated clock. */
  clock: Clock;
  /** Numbers in [0, 1) for the work-time jitter. */
  random: () => number;
  /** The run's duration: statistics cover [0, durationMs). */
  durationMs: number;
}

/**
 * K workers and a FIFO queue on a simulated clock.
 *
 * @example
 * ```ts
 * import { FakeEventClock } from "../fairqueuing/clock.ts";
 * import { WorkerPoolUpstream } from "./upstream.ts";
 * const clock = new FakeEventClock();
 * const upstream = new WorkerPoolUpstream(
 *   { workers: 1, workMs: 50, jitter: 0, changes: [] },
 *   { clock, random: Math.random, durationMs: 1000 },
 * );
 * const latencies: number[] = [];
 * upstream.submit((ms) => latencies.push(ms));
 * upstream.submit((ms) => latencies.push(ms));
 * clock.runUntilIdle();
 * latencies; // [50, 100]: the second waited for the only worker
 * ```
 */
export class WorkerPoolUpstream {
  #scenario: UpstreamScenario;
  #clock: Clock;
  #random: () => number;
  #durationMs: number;
  #workers: number;
  #busy = 0;
  #inFlight = 0;
  #queue: { arrivedMs: number; done: (latencyMs: number) => void }[] = [];
  #queueHead = 0;
  #timers: Timer[] = [];
  #notedAt = 0;
  #completed = 0;
  #overall = new TimeHistogram();
  #phases: Phase[] = [];

  /** An idle upstream; its changes of K are scheduled on `options.clock`. */
  constructor(scenario: UpstreamScenario, options: WorkerPoolUpstreamOptions) {
    this.#scenario = scenario;
    this.#clock = options.clock;
    this.#random = options.random;
    this.#durationMs = options.durationMs;
    this.#workers = scenario.workers;
    this.#notedAt = this.#clock.now();
    let from = 0;
    let workers = scenario.workers;
    for (const change of [...scenario.changes, { atMs: Infinity, workers: 0 }]) {
      const to = Math.min(change.atMs, options.durationMs);
      if (to > from) this.#phases.push(newPhase(from, to, workers));
      from = Math.max(from, to);
      workers = change.workers;
    }
    for (const change of scenario.changes) {
      this.#timers.push(this.#clock.setTimer(change.atMs - this.#clock.now(), () => {
        this.#note();
        this.#workers = change.workers;
        this.#dispatch();
      }));
    }
  }

  /** Workers now. */
  get workers(): number {
    return this.#workers;
  }

  /** Requests inside now (working or queued). */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Sends a request in; `done` is called with its latency (queue and work) when it completes. */
  submit(done: (latencyMs: number) => void): void {
    this.#note();
    this.#inFlight++;
    this.#queue.push({ arrivedMs: this.#clock.now(), done });
    this.#dispatch();
  }

  /** What it did over [0, durationMs) (call once the run is over). */
  result(): UpstreamResult {
    this.#note();
    const capacity = (workers: number) => (workers * 1000) / this.#scenario.workMs;
    return {
      completed: this.#completed,
      inFlight: summary(this.#overall),
      phases: this.#phases.map((p) => {
        const seconds = (p.toMs - p.settledFromMs) / 1000;
        const rate = seconds > 0 ? p.completed / seconds : 0;
        return {
          fromMs: p.fromMs,
          toMs: p.toMs,
          workers: p.workers,
          settledFromMs: p.settledFromMs,
          completed: p.completed,
          throughputPerSecond: round3(rate),
          throughputRatio: round3(rate / capacity(p.workers)),
          inFlight: summary(p.inFlight),
        };
      }),
    };
  }

  /** Cancels the pending changes of K. */
  close(): void {
    for (const t of this.#timers) t.cancel();
    this.#timers = [];
  }

  #dispatch(): void {
    while (this.#busy < this.#workers && this.#queueHead < this.#queue.length) {
      const request = this.#queue[this.#queueHead]!;
      this.#queue[this.#queueHead++] = undefined!;
      if (this.#queueHead > 1024 && this.#queueHead * 2 > this.#queue.length) {
        this.#queue = this.#queue.slice(this.#queueHead);
        this.#queueHead = 0;
      }
      this.#busy++;
      const { workMs, jitter } = this.#scenario;
      const work = workMs * (1 + jitter * (2 * this.#random() - 1));
      this.#clock.setTimer(work, () => {
        this.#note();
        this.#busy--;
        this.#inFlight--;
        const now = this.#clock.now();
        if (now < this.#durationMs) {
          this.#completed++;
          const phase = this.#phases.find((p) => p.settledFromMs <= now && now < p.toMs);
          if (phase !== undefined) phase.completed++;
        }
        this.#dispatch();
        request.done(now - request.arrivedMs);
      });
    }
  }

  /** Counts the time since the last change at the current number in flight. */
  #note(): void {
    const now = Math.min(this.#clock.now(), this.#durationMs);
    const from = this.#notedAt;
    if (now <= from) return;
    this.#overall.add(this.#inFlight, now - from);
    for (const p of this.#phases) {
      const ms = Math.min(now, p.toMs) - Math.max(from, p.settledFromMs);
      if (ms > 0) p.inFlight.add(this.#inFlight, ms);
    }
    this.#notedAt = now;
  }
}

function newPhase(fromMs: number, toMs: number, workers: number): Phase {
  const settledFromMs = Math.min(fromMs + UPSTREAM_SETTLE_MS, toMs);
  return { fromMs, toMs, workers, settledFromMs, completed: 0, inFlight: new TimeHistogram() };
}

function summary(h: TimeHistogram): InFlightSummary {
  return { p50: h.percentile(0.5), p90: h.percentile(0.9), mean: round3(h.mean()), max: h.max };
}

function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}
