import { Controller, Get } from '@nestjs/common';
import { LockService } from '../../lib/index.js';
import { RESTOCK_PERIOD_MS, RestockJob } from './restock.job.js';

/** What the scheduled jobs of this instance did, for the demo's report. */
@Controller('jobs')
export class JobsController {
  /** The ticks (epoch ms / period) at which this instance's restock job stood aside for another instance. */
  private readonly skippedTicks: number[] = [];

  constructor(
    private readonly restockJob: RestockJob,
    private readonly locks: LockService,
  ) {
    locks.events.subscribe((event) => {
      if (event.type === 'skipped' && event.method === 'RestockJob.restock')
        this.skippedTicks.push(Math.floor(Date.now() / RESTOCK_PERIOD_MS));
    });
  }

  @Get('restock')
  restock(): { instance: string; ran: number[]; skipped: number[] } {
    return { instance: this.locks.instance, ran: [...this.restockJob.ranTicks], skipped: [...this.skippedTicks] };
  }
}
