import { Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { LockedJob } from '../../lib/index.js';

/** The restock job's schedule: every 2 seconds, on the second (every instance fires the same ticks). */
export const RESTOCK_CRON = '*/2 * * * * *';
export const RESTOCK_PERIOD_MS = 2_000;

/**
 * A restock run on a schedule, as every instance of the app declares it: `@LockedJob()` lets one
 * instance run each tick and holds the tick for a second after the (fast) run, so an instance whose
 * timer fires a little late skips it instead of restocking twice. The ticks this instance ran are
 * kept for the demo's report (GET /jobs/restock).
 */
@Injectable()
export class RestockJob {
  /** The ticks (epoch ms / period) this instance ran. */
  readonly ranTicks: number[] = [];

  @Cron(RESTOCK_CRON, { name: 'restock' })
  @LockedJob({ minHoldMs: 1_000, maxHoldMs: 10_000 })
  async restock(): Promise<void> {
    this.ranTicks.push(Math.floor(Date.now() / RESTOCK_PERIOD_MS));
  }
}
