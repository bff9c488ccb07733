/**
 * The level object of the conformance Worker (`conformance_worker.ts`): a
 * `PriorityLevelObject` whose host, supplied through `createHost`, runs on
 * a fake clock and serves the conformance suite's configuration without a
 * controller, for whatever level the object is first asked for (a level
 * the configuration lacks is then `unavailable`). The bridge moves its
 * clock (`advanceTo`) and asks what is in flight (`probe`).
 *
 * @module
 */

import {
  LevelHost,
  type LevelHostOptions,
  type Liveness,
} from "../../../src/cloudflare/_level_host.ts";
import { type LevelAdmission, PriorityLevelObject } from "../../../src/cloudflare/level_object.ts";
import type { SeatRequest } from "../../../src/coordinator/types.ts";
import { FakeEventClock } from "../../../src/fairqueuing/clock.ts";
import type { CoordinatorSnapshot } from "../../../src/observe/types.ts";
import { conformanceConfiguration } from "../../_helpers/coordinator_config.ts";

/** What a level object leaves at the end of a case. */
export interface LevelObjectReport {
  /** Its state before its host closed. */
  snapshot: CoordinatorSnapshot;
  /** Its fake clock's timers left after its host closed. */
  pendingTimers: number;
}

/** What a level object tells the bridge about the calls it has seen. */
export interface LevelObjectProbe {
  received: number;
  answered: number;
  /** Liveness calls to the Worker not answered yet. */
  checking: number;
}

const CONFIG = conformanceConfiguration();

/** Leases far longer than any case: a renewal cannot cross the RPC inside one clock move. */
const LEASE_MS = 3_600_000;

/** A level host on a fake clock, serving the suite's configuration. */
class FakeClockHost extends LevelHost {
  readonly clock: FakeEventClock;

  constructor(options: LevelHostOptions) {
    const clock = new FakeEventClock();
    super({ ...options, clock, leaseMs: LEASE_MS, resolve: () => CONFIG });
    this.clock = clock;
  }
}

/**
 * A level object on a fake clock that configures itself, for whatever
 * level it is first asked for, with the suite's configuration.
 */
export class ConformanceLevelObject extends PriorityLevelObject {
  #received = 0;
  #answered = 0;
  #checking = 0;

  protected override createHost(options: LevelHostOptions): LevelHost {
    return new FakeClockHost(options);
  }

  override async acquire(request: SeatRequest, liveness?: Liveness): Promise<LevelAdmission> {
    this.#received++;
    const level: unknown = (request as Partial<SeatRequest> | null)?.priorityLevel;
    if (this.host.level === null && typeof level === "string" && level !== "") {
      this.update(level, {
        version: 1,
        // What clients see; the host serves CONFIG, its `resolve` (FakeClockHost) of this.
        configuration: {
          serverConcurrencyLimit: CONFIG.serverConcurrencyLimit,
          mandatoryOnly: false,
          objects: [],
        },
        limits: Object.fromEntries(CONFIG.priorityLevels.map((pl) => [pl.name, pl.currentLimit])),
      });
    }
    try {
      return await super.acquire(request, liveness && this.#counted(liveness));
    } finally {
      this.#answered++;
    }
  }

  /** Moves the object's clock to `ms`, running its timers. */
  advanceTo(ms: number): void {
    this.#clock.advanceTo(ms);
  }

  /** The calls seen so far. */
  probe(): LevelObjectProbe {
    return { received: this.#received, answered: this.#answered, checking: this.#checking };
  }

  /** The state, then closes the host: what the case left behind. */
  finish(): LevelObjectReport {
    const snapshot = this.host.snapshot();
    this.host.close();
    return { snapshot, pendingTimers: this.#clock.pendingTimers };
  }

  get #clock(): FakeEventClock {
    return (this.host as FakeClockHost).clock;
  }

  /** `liveness`, counting its calls in flight. */
  #counted(liveness: Liveness): Liveness {
    return {
      alive: async () => {
        this.#checking++;
        try {
          return await liveness.alive();
        } finally {
          this.#checking--;
        }
      },
    };
  }
}
