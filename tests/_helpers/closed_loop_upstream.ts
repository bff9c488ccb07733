/**
 * A closed-loop load on an upstream of K workers with work time S, on a fake
 * clock, limited by a learned limit: as many requests are in flight as the
 * limit allows (clients always want more), and a request started with n in
 * flight takes `S × max(1, n / K)` times a multiplicative noise (queueing
 * inside the upstream). Each completion is recorded on the controller.
 */

import type { GradientController } from "../../src/adaptive/gradient_controller.ts";
import type { SampleOutcome } from "../../src/adaptive/types.ts";
import type { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import { seededRandom } from "../../src/sim/_random.ts";

/** A deterministic generator of numbers in [0, 1): the simulator's own. */
export const xorshift: (seed: number) => () => number = seededRandom;

/** Settings of a {@linkcode ClosedLoopUpstream}. */
export interface ClosedLoopOptions {
  /** K. */
  workers: number;
  /** S, in ms. */
  workMs: number;
  /** Latencies are multiplied by a uniform factor in [1 − noise, 1 + noise] (default 0). */
  noise?: number;
  /** The noise's random numbers (default: a fixed xorshift). */
  random?: () => number;
  /** Demand reported with each sample (default 1000: clients always want more). */
  demand?: number;
}

/** How a request ends, decided when it starts: `undefined` for the model's latency and "ok". */
export type Fate = { outcome: SampleOutcome; latencyMs: number } | undefined;

/** The load and the upstream together; change K, S or fates between steps. */
export class ClosedLoopUpstream {
  workers: number;
  workMs: number;
  demand: number;
  /** Decides the fate of each request (default: always the model's). */
  fate: (inFlight: number) => Fate = () => undefined;
  #noise: number;
  #random: () => number;
  #controller: GradientController;
  #clock: FakeEventClock;
  #inFlight = 0;
  #completions: number[] = [];
  #stopped = false;
  #unsubscribe: () => void;

  constructor(controller: GradientController, clock: FakeEventClock, options: ClosedLoopOptions) {
    this.#controller = controller;
    this.#clock = clock;
    this.workers = options.workers;
    this.workMs = options.workMs;
    this.demand = options.demand ?? 1000;
    this.#noise = options.noise ?? 0;
    this.#random = options.random ?? xorshift(7);
    this.#unsubscribe = controller.onLimit(() => this.#fill());
    this.#fill();
  }

  /** Requests in flight now. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Requests served ("ok") in [fromMs, toMs), per second. */
  throughput(fromMs: number, toMs: number): number {
    const n = this.#completions.filter((t) => t >= fromMs && t < toMs).length;
    return n / ((toMs - fromMs) / 1000);
  }

  /** Starts no more requests; those in flight finish without being recorded. */
  stop(): void {
    this.#stopped = true;
    this.#unsubscribe();
  }

  #fill(): void {
    while (!this.#stopped && this.#inFlight < this.#controller.limit) this.#start();
  }

  #start(): void {
    this.#inFlight++;
    const fate = this.fate(this.#inFlight);
    const factor = 1 + this.#noise * (2 * this.#random() - 1);
    const latencyMs = fate?.latencyMs ??
      this.workMs * Math.max(1, this.#inFlight / this.workers) * factor;
    const outcome = fate?.outcome ?? "ok";
    this.#clock.setTimer(latencyMs, () => {
      this.#inFlight--;
      if (this.#stopped) return;
      if (outcome === "ok") this.#completions.push(this.#clock.now());
      this.#controller.record({ latencyMs, outcome, demand: this.demand });
      this.#fill();
    });
  }
}
